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
      <ActionForm action={codeAction} submit={async () => setCode((await api.requestCode(session.id, phone.trim())).code)}>
        <label>Or pair by phone number <input name="phoneNumber" placeholder="15551234567" required value={phone} onInput={(e) => setPhone(e.currentTarget.value)} /></label>
        <button type="submit" disabled={codeAction.busy || !waiting}>Request pairing code</button>
        {code && <p class="code" data-pairing-code>{code}</p>}
      </ActionForm>
    </div>
  );
}
