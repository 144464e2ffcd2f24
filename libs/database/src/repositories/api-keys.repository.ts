import { Injectable } from '@nestjs/common';
import { ApiKey } from '../entities/api-key.entity';
import { Db, EntityTable, type Tx } from '../pg';

const API_KEYS = new EntityTable(ApiKey);
const PATCH_COLUMNS: Record<keyof ApiKeyPatch, string> = { name: 'name', sessionIds: 'session_ids', allowedIps: 'allowed_ips', expiresAt: 'expires_at' };

/** What a key's owner may change on it after creation (permissions only through the CLI). */
export interface ApiKeyPatch {
  name?: string;
  sessionIds?: string[] | null;
  allowedIps?: string[] | null;
  expiresAt?: Date | null;
}

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  /** An organization's keys, revoked ones included, oldest first. */
  async listByOrganization(organizationId: string): Promise<ApiKey[]> {
    return API_KEYS.select(this.db, 'organization_id = $1', [organizationId], 'ORDER BY created_at, id');
  }

  /** The keys an owner manages: not revoked, oldest first. */
  async listUsableByOrganization(organizationId: string): Promise<ApiKey[]> {
    return API_KEYS.select(this.db, 'organization_id = $1 AND revoked_at IS NULL', [organizationId], 'ORDER BY id');
  }

  /** A revoked or expired key is not found: its token authenticates nothing. */
  async findUsableByTokenHash(tokenHash: string): Promise<ApiKey | null> {
    const key = await API_KEYS.selectOne(this.db, 'token_hash = $1 AND revoked_at IS NULL', [tokenHash]);
    return key && !isExpired(key) ? key : null;
  }

  /** Any key with this hash, revoked or expired too: whom a refused request is recorded against. */
  async findByTokenHash(tokenHash: string): Promise<ApiKey | null> {
    return API_KEYS.selectOne(this.db, 'token_hash = $1', [tokenHash]);
  }

  async findById(id: string): Promise<ApiKey | null> {
    return API_KEYS.selectOne(this.db, 'id = $1', [id]);
  }

  /** An unrevoked key of this organization (expired ones included: their owner may extend or revoke them). */
  async findUsableInOrganization(organizationId: string, id: string, tx?: Tx): Promise<ApiKey | null> {
    return API_KEYS.selectOne(tx ?? this.db, 'id = $1 AND organization_id = $2 AND revoked_at IS NULL', [id, organizationId]);
  }

  async create(key: ApiKey, tx?: Tx): Promise<ApiKey> {
    return API_KEYS.insert(tx ?? this.db, key);
  }

  /** What the API-key quota counts: keys not revoked. */
  async countUsableInOrganization(organizationId: string, tx?: Tx): Promise<number> {
    const [row] = await (tx ?? this.db).query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1 AND revoked_at IS NULL', [organizationId]);
    return row.n;
  }

  /** False when there is no usable (unrevoked) key with this id. */
  async changePermissions(id: string, permissions: string[], tx?: Tx): Promise<boolean> {
    return (await (tx ?? this.db).affected('UPDATE api_keys SET permissions = $2 WHERE id = $1 AND revoked_at IS NULL', [id, permissions])) > 0;
  }

  /** False when there is no unrevoked key with this id. */
  async patch(id: string, patch: ApiKeyPatch, tx?: Tx): Promise<boolean> {
    const keys = (Object.keys(patch) as Array<keyof ApiKeyPatch>).filter((key) => patch[key] !== undefined);
    if (keys.length === 0) return true;
    const sets = keys.map((key, i) => `${PATCH_COLUMNS[key]} = $${i + 2}`).join(', ');
    return (await (tx ?? this.db).affected(`UPDATE api_keys SET ${sets} WHERE id = $1 AND revoked_at IS NULL`, [id, ...keys.map((key) => patch[key])])) > 0;
  }

  /** Keeps the first revocation time when called again; false when it was revoked already (or never existed). */
  async revoke(id: string, tx?: Tx): Promise<boolean> {
    return (await (tx ?? this.db).affected('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, new Date()])) > 0;
  }

  /** Best effort, at most once a minute per key (the caller throttles): a listing's "last used". */
  async touchUsed(id: string, at: Date): Promise<void> {
    await this.db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
  }
}

export const isExpired = (key: Pick<ApiKey, 'expiresAt'>, now = Date.now()): boolean => !!key.expiresAt && key.expiresAt.getTime() <= now;
