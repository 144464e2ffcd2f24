import type { Redis } from 'ioredis';
import { PRINCIPAL_CHANGED_CHANNEL, PrincipalChange } from '@app/contracts';
import type { RedisKeys } from '@app/redis';
import { ChangeChannel, ChangeListener } from './change-channel';

export type PrincipalChangeListener = ChangeListener<PrincipalChange> & { interrupted(): void };

/** `kind:id` → a change, or null for anything else. */
function parsePrincipalChange(message: string): PrincipalChange | null {
  const at = message.indexOf(':');
  const kind = message.slice(0, at);
  const id = message.slice(at + 1);
  return at > 0 && id && (kind === 'apiKey' || kind === 'user') ? { kind, id } : null;
}

/**
 * "A principal changed" between whoever writes keys and users (the admin CLI, the API) and every API replica (which
 * caches principals and holds WebSockets), `kind:id` as the message. A listener trusts what it cached only while its
 * subscription has had no gap (see docs/auth.md).
 */
export class PrincipalChanges extends ChangeChannel<PrincipalChange> {
  static readonly parse = parsePrincipalChange;

  constructor(redis: Redis, keys: RedisKeys) {
    super(redis, keys, PRINCIPAL_CHANGED_CHANNEL, { encode: (c) => `${c.kind}:${c.id}`, decode: parsePrincipalChange });
  }
}
