import { randomBytes } from 'node:crypto';

/**
 * The network id of an outbound message, fixed when the API accepts it so every (re)send carries the same one and the
 * recipient never sees it twice. Shaped like the ids WhatsApp Web mints (`3EB0` + 18 uppercase hex).
 */
export function newWaMessageId(): string {
  return `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
}
