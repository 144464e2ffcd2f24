import { randomUlid, ulidAt } from '@app/crypto';

/** Prefixed, sortable ids: `ses_01J…`. */
export const newId = (prefix: 'org' | 'usr' | 'key' | 'ses' | 'grp' | 'whk' | 'snk' | 'evt' | 'dlv' | 'att' | 'msg' | 'ctc' | 'cmp' | 'inv' | 'pwr' | 'aud' | 'cwt') => `${prefix}_${randomUlid()}`;

/** As newId, sorting at `ms` (epoch ms) rather than now: a message from a history sync sorts where it happened. */
export const newIdAt = (prefix: 'msg', ms: number) => `${prefix}_${ulidAt(ms)}`;
