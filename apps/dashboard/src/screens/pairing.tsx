import { useEffect, useState } from 'preact/hooks';
import { api, type SessionView } from '../api';
import { live } from '../live';
import { ActionForm, ErrorLine, message, useAction } from '../ui';

/**
 * Pairs a session: its QR as the API renders it (PNG), fetched again whenever `auth.qr` arrives for it, or a pairing
 * code for a phone number. The PNG needs the bearer token, so it is fetched and shown as an object URL.
 */
export function Pairing({ session }: { session: SessionView }) {
  const [qrUrl, setQrUrl] = useState<string | null>(null);
  const [qrVersion, setQrVersion] = useState(0);
  const [qrError, setQrError] = useState<string | null>(null);
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState<string | null>(null);
  const codeAction = useAction();
  const waiting = session.status === 'scan_qr_code';
  const onSimulator = useOnSimulator(session.gatewayId);

  useEffect(() => {
    if (!waiting) return;
    let url: string | null = null;
    let cancelled = false;
    const fetchQr = () =>
      api.qrImage(session.id).then(
        (blob) => {
          if (cancelled) return;
          if (url) URL.revokeObjectURL(url);
          url = URL.createObjectURL(blob);
          setQrUrl(url);
          setQrVersion((v) => v + 1);
          setQrError(null);
        },
        (err) => !cancelled && setQrError(message(err)),
      );
    fetchQr();
    const off = live.subscribe((e) => {
      if (e.event === 'auth.qr' && e.sessionId === session.id) fetchQr();
    });
    return () => {
      cancelled = true;
      off();
      if (url) URL.revokeObjectURL(url);
      setQrUrl(null);
    };
  }, [session.id, waiting]);

  if (session.status === 'working') return <p class="ok" data-paired={session.id}>Paired with +{session.phoneNumber}.</p>;
  return (
    <div class="pairing" data-pairing={session.id}>
      <div class="qr">
        {waiting && qrUrl ? (
          <img src={qrUrl} alt={`QR code for ${session.label}`} data-qr-version={qrVersion} width={220} height={220} />
        ) : (
          <div class="qr-placeholder">{waiting ? 'Loading QR…' : `Waiting for the session (${session.status.replace(/_/g, ' ')})`}</div>
        )}
        <ErrorLine error={qrError} />
        <p class="muted">Scan with WhatsApp → Linked devices. The code refreshes by itself.</p>
      </div>
      {onSimulator && <SimulatorScan sessionId={session.id} />}
      <ActionForm action={codeAction} submit={async () => setCode((await api.requestCode(session.id, phone.trim())).code)}>
        <label>Or pair by phone number <input name="phoneNumber" placeholder="15551234567" required value={phone} onInput={(e) => setPhone(e.currentTarget.value)} /></label>
        <button type="submit" disabled={codeAction.busy || !waiting}>Request pairing code</button>
        {code && <p class="code" data-pairing-code>{code}</p>}
      </ActionForm>
    </div>
  );
}

/** Whether the session's gateway runs the network simulator engine (the demo): then no phone can scan its QR. */
function useOnSimulator(gatewayId: string | null): boolean {
  const [sim, setSim] = useState(false);
  useEffect(() => {
    if (!gatewayId) return;
    let cancelled = false;
    // a tenant sees the gateways that host its own sessions, engine included
    api.gateways().then((r) => !cancelled && setSim(r.data.some((g) => g.id === gatewayId && g.engine === 'sim')), () => undefined);
    return () => {
      cancelled = true;
    };
  }, [gatewayId]);
  return sim;
}

/** On the simulator, "the phone scans" is a call to its control API; the demo banner prints the simulator's URL. */
function SimulatorScan({ sessionId }: { sessionId: string }) {
  const curl = `curl -s -X POST http://127.0.0.1:4010/sim/sessions/${sessionId}/scan -H 'content-type: application/json' -d '{"phoneNumber":"15551234567"}'`;
  return (
    <div class="sim-scan" data-sim-scan={sessionId}>
      <h3>On the simulator</h3>
      <p class="muted">
        This session runs on the network simulator: no phone can scan this code. Play the phone with the simulator’s control
        API (port 4010 is <span class="mono">SIM_PORT</span>’s default; the demo banner prints yours):
      </p>
      <pre class="mono">{curl}</pre>
    </div>
  );
}
