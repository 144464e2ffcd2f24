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
  const network = useNetwork(session.gatewayId);

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
        <p class="muted">The code refreshes by itself.</p>
      </div>
      {network?.simulated ? <SimulatorScan sessionId={session.id} engine={network.engine} waiting={waiting} qrVersion={qrVersion} /> : <PhoneSteps />}
      <ActionForm action={codeAction} submit={async () => setCode((await api.requestCode(session.id, phone.trim())).code)}>
        <label>Or pair by phone number <input name="phoneNumber" placeholder="15551234567" required value={phone} onInput={(e) => setPhone(e.currentTarget.value)} /></label>
        <button type="submit" disabled={codeAction.busy || !waiting}>Request pairing code</button>
        {code && <p class="code" data-pairing-code>{code}</p>}
      </ActionForm>
    </div>
  );
}

/** What the session's gateway talks to: its engine, and whether its WhatsApp is the simulator (a demo, a test). */
function useNetwork(gatewayId: string | null): { engine: string; simulated: boolean } | null {
  const [network, setNetwork] = useState<{ engine: string; simulated: boolean } | null>(null);
  useEffect(() => {
    if (!gatewayId) return;
    let cancelled = false;
    // a tenant sees the gateways that host its own sessions, engine included
    api.gateways().then((r) => {
      const g = r.data.find((x) => x.id === gatewayId);
      if (!cancelled && g) setNetwork({ engine: g.engine, simulated: g.simulated });
    }, () => undefined);
    return () => {
      cancelled = true;
    };
  }, [gatewayId]);
  return network;
}

/** Pairing a real phone, as WhatsApp names the steps. */
function PhoneSteps() {
  return (
    <div class="phone-steps" data-phone-steps>
      <h3>With your phone</h3>
      <ol>
        <li>Open WhatsApp on the phone whose number this session will use.</li>
        <li>Android: ⋮ → <b>Linked devices</b>; iPhone: Settings → <b>Linked devices</b>.</li>
        <li>Tap <b>Link a device</b> and point the camera at this code (or pick “Link with phone number instead” and request a pairing code below).</li>
      </ol>
    </div>
  );
}

/**
 * In a demo no phone can scan: the simulator's control API plays the phone (the demo banner prints the same line; port
 * 4010 is SIM_PORT's default). The `sim` engine needs only the session id; Baileys against the simulator's WhatsApp
 * Web front door needs the QR itself (it carries Baileys' keys), so the line is written with the current one.
 */
function SimulatorScan({ sessionId, engine, waiting, qrVersion }: { sessionId: string; engine: string; waiting: boolean; qrVersion: number }) {
  const [qr, setQr] = useState<string | null>(null);
  useEffect(() => {
    if (engine === 'sim' || !waiting) return;
    let cancelled = false;
    // JSON by default (the PNG only with Accept: image/png)
    api.qr(sessionId).then((r) => !cancelled && setQr((r as { qr: string }).qr), () => undefined);
    return () => {
      cancelled = true;
    };
  }, [sessionId, engine, waiting, qrVersion]);
  const body = engine === 'sim' ? `'{"phoneNumber":"15551234567"}'` : `'${JSON.stringify({ phoneNumber: '15551234567', qr: qr ?? '<the QR>' })}'`;
  const curl = `curl -s -X POST http://127.0.0.1:4010/sim/sessions/${sessionId}/scan -H 'content-type: application/json' -d ${body}`;
  return (
    <div class="sim-scan" data-sim-scan={sessionId} data-engine={engine}>
      <h3>On the simulator</h3>
      <p class="muted">
        This session’s gateway{engine === 'sim' ? ' runs the network simulator' : ' runs Baileys against the network simulator'}: no phone can scan this
        code. Play the phone with the simulator’s control API (port 4010 is <span class="mono">SIM_PORT</span>’s default; the demo banner prints yours)
        {engine === 'sim' ? '' : ', with the QR shown here (the line follows each new one)'}:
      </p>
      <pre class="mono">{curl}</pre>
    </div>
  );
}
