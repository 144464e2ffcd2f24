import { randomFillSync } from 'node:crypto';
import { ulid } from 'ulid';

const pool = Buffer.alloc(4096);
let next = pool.length;

/** ulid's default source makes a crypto call per character; drawing the bytes in bulk makes ids ~10x cheaper. */
function pooledRandom(): number {
  if (next >= pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] / 256;
}

/** A ULID (time-sortable, 80 random bits) from a pooled CSPRNG source; ids are made on hot paths. */
export const randomUlid = (): string => ulid(undefined, pooledRandom);

/** A ULID whose time part is `ms` (epoch ms): ids of records made now for something that happened then (history). */
export const ulidAt = (ms: number): string => ulid(ms, pooledRandom);
