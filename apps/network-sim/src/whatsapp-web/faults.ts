/**
 * The faults of `POST /sim/sessions/{id}/fault` (CONTRACT 9) as WhatsApp Web says them, and the stanzas of the closes
 * SimNetwork itself makes (replacement, unlink, a revoked login). One table: what a fault kind or a network close code
 * sends on a WhatsApp Web socket, and what Baileys 7.0.0-rc14 makes of it (`Socket/socket.js`: `CB:stream:error` reads
 * `code`, else `conflict` → 440, else 500; `CB:failure` reads `reason`; a silent socket is noticed by its keepalive).
 *
 * | kind | stanza | Baileys reports |
 * |---|---|---|
 * | stream-error-515 | `<stream:error code="515"/>` | 515 restart required |
 * | stream-error-ack | `<stream:error><ack/></stream:error>` | 500 (no code) |
 * | conflict | `<stream:error><conflict type="replaced"/></stream:error>` | 440 |
 * | failure-401 | `<failure reason="401"/>` | 401 logged out |
 * | failure-403 | `<failure reason="403"/>` | 403 |
 * | failure-405 | `<failure reason="405"/>` | 405 (not in Baileys' enum; our engine reads it as client version refused) |
 * | silent | nothing: no frame is read or written, keepalive pings go unanswered | 408 after `keepAliveIntervalMs` + 5 s |
 * | drop | the socket ends abruptly | 428 connection closed |
 */
import { SIM_CLOSE_CODES, SimFaultKind } from '@app/contracts';
import type { BinaryNode } from './wa-kit';

/** What the connection does for a fault: send this stanza then close, go silent, or end the socket. */
export type WaFaultAction = { stanza: BinaryNode } | { silence: true } | { drop: true };

const failure = (reason: number): BinaryNode => ({ tag: 'failure', attrs: { reason: String(reason), location: 'sim' } });
const REPLACED: BinaryNode = { tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] };
const RESTART: BinaryNode = { tag: 'stream:error', attrs: { code: '515' } };
const ACK: BinaryNode = { tag: 'stream:error', attrs: {}, content: [{ tag: 'ack', attrs: {} }] };

export const WA_FAULTS: Record<SimFaultKind, WaFaultAction> = {
  'stream-error-515': { stanza: RESTART },
  'stream-error-ack': { stanza: ACK },
  conflict: { stanza: REPLACED },
  'failure-401': { stanza: failure(401) },
  'failure-403': { stanza: failure(403) },
  'failure-405': { stanza: failure(405) },
  silent: { silence: true },
  drop: { drop: true },
};

/**
 * The stanza for a close SimNetwork makes on its own (SIM_CLOSE_CODES): a login on a revoked or unknown credential is
 * `<failure reason="401">` (WhatsApp's answer to a device it does not know); an unlink of a logged-in device is
 * `<stream:error code="401"><conflict type="device_removed"/>`; a newer socket is a conflict (440).
 */
export function closeStanza(code: number, loggedIn: boolean): BinaryNode {
  switch (code) {
    case SIM_CLOSE_CODES.loggedOut:
      return loggedIn ? { tag: 'stream:error', attrs: { code: '401' }, content: [{ tag: 'conflict', attrs: { type: 'device_removed' } }] } : failure(401);
    case SIM_CLOSE_CODES.replaced:
      return REPLACED;
    case SIM_CLOSE_CODES.restartRequired:
      return RESTART;
    case SIM_CLOSE_CODES.forbidden:
      return failure(403);
    case SIM_CLOSE_CODES.clientVersionRefused:
      return failure(405);
    default:
      return ACK;
  }
}
