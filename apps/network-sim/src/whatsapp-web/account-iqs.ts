/** The account's own IQs: contacts lookups, profile pictures and about, block list, presence subscriptions (CONTRACT 12 over the WhatsApp Web door). */
import type { IqAnswer } from './stanzas';

export const ACCOUNT_IQ_ANSWERS: Record<string, IqAnswer> = {
  'blocklist get': () => [{ tag: 'list', attrs: {}, content: [] }],
};
