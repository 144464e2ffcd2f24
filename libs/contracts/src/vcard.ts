import type { ContactContent } from './messages';

/**
 * A contact card as WhatsApp carries it (contactMessage / contactsArrayMessage `vcard`), both ways: the one place that
 * writes and reads it, shared by the Baileys engine and the simulator's WhatsApp Web door (whose contacts' phones
 * send cards and read the device's).
 */

/** vCard 3.0 text values escape backslash, comma, semicolon and newlines. */
function vcardText(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/([,;])/g, '\\$1').replace(/\r?\n/g, '\\n');
}

/** The vCard WhatsApp itself sends: `waid` makes the card open the chat with that number. */
export function vcardFor(contact: ContactContent): string {
  const digits = contact.phoneNumber.replace(/\D/g, '');
  return [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `FN:${vcardText(contact.fullName)}`,
    `TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`,
    'END:VCARD',
  ].join('\n');
}

/** vCard 3.0 unfolding and the two fields we show: the name (FN) and the number (TEL, its `waid` when present). */
export function contactFromVcard(vcard: string | null | undefined, displayName: string | null | undefined): ContactContent {
  const lines = (vcard ?? '').replace(/\r?\n[ \t]/g, '').split(/\r?\n/);
  let fullName: string | null = null;
  let phoneNumber: string | null = null;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const [name, ...params] = line.slice(0, colon).split(';');
    const field = name.split('.').pop()!.toUpperCase();
    const value = line.slice(colon + 1);
    if (field === 'FN' && fullName === null) fullName = value.replace(/\\([,;\\])/g, '$1').replace(/\\n/gi, ' ').trim();
    if (field === 'TEL' && phoneNumber === null) {
      const waid = params.find((p) => p.toLowerCase().startsWith('waid='));
      phoneNumber = (waid ? waid.slice(5) : value).replace(/\D/g, '');
    }
  }
  return { fullName: displayName || fullName || '', phoneNumber: phoneNumber ?? '' };
}
