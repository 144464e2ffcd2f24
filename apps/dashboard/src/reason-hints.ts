/** What a session's reason means for its user: pure, so a unit spec pins every family's hint. */
import type { SessionStatus } from '@app/contracts';

/** The statuses whose reason a user needs to read to know what happens next (or what to do). */
export const EXPLAINED_STATUSES: ReadonlyArray<SessionStatus> = ['starting', 'reconnecting', 'failed', 'logged_out'];

export interface Explained {
  /** the reason as the gateway wrote it, without the time of the next attempt */
  reason: string;
  /** ISO time of the next attempt, while a retry is scheduled */
  nextAttemptAt: string | null;
  /** what to do about it, one short sentence */
  hint: string;
}

const TRANSPORT = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|TLS:|certificate/i;

/**
 * One hint per reason family (docs/sessions.md lists the reasons the gateway writes). The first word before `:` is the
 * family; `reconnect_attempts_exhausted: <last reason>` is explained by its last reason, with "then Start" added.
 */
function hintFor(reason: string, status: string): string {
  const [family, ...rest] = reason.split(': ');
  const cause = rest.join(': ');
  if (family === 'reconnect_attempts_exhausted') {
    const fix = TRANSPORT.test(cause) ? 'check the gateway’s network, DNS, proxy or firewall' : cause === 'pairing_expired' ? 'have the phone ready' : 'fix the cause';
    return `It stopped trying after repeated failures: ${fix}, then press Start.`;
  }
  if (TRANSPORT.test(cause)) {
    return 'The gateway cannot reach WhatsApp: check its network, DNS, proxy or firewall (and WHATSAPP_WEB_URL if set). It retries by itself.';
  }
  switch (family) {
    case 'connect_failed':
      return 'WhatsApp refused or dropped the connection. It retries by itself; if it keeps failing, check the gateway log.';
    case 'connection_lost':
      return 'The connection dropped. It reconnects by itself; nothing sent is lost.';
    case 'logged_out':
    case 'unlinked_on_phone':
    case 'logout_requested':
      return 'The phone no longer links this device. Press Start and scan a new QR code (Logout first to clear the old pairing).';
    case 'bad_session':
      return 'The stored credentials are unusable. Press Logout, then Start and scan a new QR code.';
    case 'client_version_refused':
      return 'WhatsApp refused this client version: update the gateway or set WHATSAPP_WEB_VERSION. It retries by itself.';
    case 'forbidden':
      return 'WhatsApp refused this account (banned or restricted). Check WhatsApp on the phone before starting again.';
    case 'replaced':
      return 'Another client opened this account’s session (WhatsApp Web elsewhere?). Close it, then press Start.';
    case 'qr_not_scanned':
      return 'No one scanned the QR code before it expired (several times). Press Start and scan the new code.';
    case 'pairing_expired':
      return 'No one scanned the QR code in time. Press Start (or Restart) and scan the new one.';
    case 'lease_held_elsewhere':
      return 'Another gateway still holds this session; it moves here when that one lets go.';
    case 'restart_required':
      return 'WhatsApp asked for a reconnect after pairing; it happens by itself.';
    case 'start_requested':
      return 'Starting: the QR code (or the connection) follows in a few seconds.';
    default:
      return status === 'failed' ? 'Fix the cause above, then press Start.' : 'It retries by itself; the gateway log says more.';
  }
}

/** Splits `…; next attempt at <ISO time>` off a reason and adds what to do about it. */
export function explainReason(raw: string, status: string): Explained {
  const m = raw.match(/^(.*?); next attempt at (\S+)$/);
  const reason = m ? m[1] : raw;
  return { reason, nextAttemptAt: m ? m[2] : null, hint: hintFor(reason, status) };
}
