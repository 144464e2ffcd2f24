/**
 * Statuses (stories) on the WhatsApp Web front door. A status travels like a group message to `status@broadcast`:
 * the poster's sender key for status@broadcast goes 1:1 to every device of its audience (Baileys' `statusJidList`,
 * each time: Baileys keeps no sender-key memory for statuses), then one `skmsg` that each of them decrypts. The
 * network records it as the sim door's status post (SimNetwork `send` with `statusPost`, then
 * SimAccountExtras.statusPosted). A contact's status reaches the device the same way, from the contact's phone.
 */
import { SimInboundStatus, STATUS_BROADCAST_JID } from '@app/contracts';
import type { SignalContact } from './signal-party';
import type { BinaryNode } from './wa-kit';

export function isStatusJid(jid: string | undefined): boolean {
  return jid === STATUS_BROADCAST_JID;
}

/** The contacts a device sent its status to: the accounts of the `<to>` copies that carry its sender key. */
export function statusAudience(copies: BinaryNode[], contact: (jid: string) => SignalContact | null): string[] {
  const accounts = copies.map((copy) => contact(copy.attrs.jid ?? '')?.jid).filter((jid): jid is string => Boolean(jid));
  return [...new Set(accounts)];
}

/** `backgroundArgb` (Baileys writes `#rrggbb` with an opaque alpha) as `#rrggbb`; null when none. */
export function backgroundOf(argb: number | null | undefined): string | null {
  if (typeof argb !== 'number' || argb === 0) return null;
  return `#${(argb & 0xffffff).toString(16).padStart(6, '0')}`;
}

/** What a contact's phone sends for its status: a text with its background (null for kinds with media). */
export function statusMessage(status: SimInboundStatus): { extendedTextMessage: { text: string; backgroundArgb?: number } } | null {
  if (status.type !== 'text' || !status.text) return null;
  const background = status.backgroundColor ? (0xff000000 | parseInt(status.backgroundColor.slice(1), 16)) >>> 0 : undefined;
  return { extendedTextMessage: { text: status.text, ...(background !== undefined ? { backgroundArgb: background } : {}) } };
}
