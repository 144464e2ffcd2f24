import { randomFillSync } from 'node:crypto';
import { ulid } from 'ulid';

const pool = Buffer.alloc(4096);
let next = pool.length;

/** ulid's default source costs a crypto call per character (and a PRNG lookup per id); this draws them in bulk. */
function pooledRandom(): number {
  if (next >= pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] / 256;
}

/**
 * Same format as `newId` of @app/database (`<prefix>_<ulid>`), for the ids made per delivery on the
 * hot path: two per delivery at thousands per second.
 */
export const newHotPathId = (prefix: 'dlv' | 'att'): string => `${prefix}_${ulid(undefined, pooledRandom)}`;
