import { randomFillSync } from 'node:crypto';

/** Random bytes drawn in bulk: one crypto call per id is a system call per send; a slice of a pooled buffer is not. */
const pool = Buffer.alloc(4096);
let next = pool.length;
const ID_BYTES = 9;

/**
 * The network id of an outbound message, fixed when the API accepts it so every (re)send carries the same one and the
 * recipient never sees it twice. Shaped like the ids WhatsApp Web mints (`3EB0` + 18 uppercase hex).
 */
export function newWaMessageId(): string {
  if (next + ID_BYTES > pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const hex = pool.toString('hex', next, next + ID_BYTES);
  next += ID_BYTES;
  return `3EB0${hex.toUpperCase()}`;
}
