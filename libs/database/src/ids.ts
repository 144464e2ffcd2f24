import { randomUlid } from '@app/crypto';

/** Prefixed, sortable ids: `ses_01J…`. */
export const newId = (prefix: 'org' | 'usr' | 'key' | 'ses' | 'grp' | 'whk' | 'evt' | 'dlv' | 'att' | 'msg' | 'ctc') => `${prefix}_${randomUlid()}`;
