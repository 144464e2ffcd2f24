import { Injectable } from '@nestjs/common';
import { SessionAuthKey } from '../entities/session-auth-key.entity';
import { Db, EntityReader, EntityTable, preparedStatement, type Queryable } from '../pg';

const AUTH_KEYS = new EntityTable(SessionAuthKey);

/** A batch of rows written, each replacing the stored one of its (session, category, key id); defaults as the columns'. */
const UPSERT = preparedStatement(
  'session_auth_keys_upsert',
  `INSERT INTO session_auth_keys (session_id, category, key_id, value, schema_version, updated_at)
   SELECT u.session_id, u.category, u.key_id, u.value, COALESCE(u.schema_version, 1), COALESCE(u.updated_at, now())
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[]) AS u(session_id, category, key_id, value, schema_version, updated_at)
   ON CONFLICT (session_id, category, key_id) DO UPDATE SET value = EXCLUDED.value, schema_version = EXCLUDED.schema_version, updated_at = EXCLUDED.updated_at`,
);

/** Baileys uploads hundreds of pre-keys at once; chunks keep each statement well under PostgreSQL's parameter limit. */
const WRITE_CHUNK = 500;

/**
 * One item (a category and key id) of many sessions: the adopting gateway reads the creds of the sessions it starts in
 * one statement per turn rather than one each (a failover starts hundreds at once).
 */
const FIND_ITEM_OF_SESSIONS = new EntityReader(
  SessionAuthKey,
  'session_auth_keys_find_item_of_sessions',
  'session_id = ANY($1::text[]) AND category = $2 AND key_id = $3',
);

/** The auth-state rows of sessions; values arrive sealed and leave sealed (the caller holds the key). */
@Injectable()
export class SessionAuthKeysRepository {
  constructor(private readonly db: Db) {}

  async find(sessionId: string, category: string, keyId: string): Promise<SessionAuthKey | null> {
    return AUTH_KEYS.selectOne(this.db, 'session_id = $1 AND category = $2 AND key_id = $3', [sessionId, category, keyId]);
  }

  /** `find` of one item for many sessions in one statement; sessions without it are left out. */
  async findOfSessions(sessionIds: readonly string[], category: string, keyId: string): Promise<Map<string, SessionAuthKey>> {
    if (sessionIds.length === 0) return new Map();
    const rows = await FIND_ITEM_OF_SESSIONS.findMany(this.db, [sessionIds, category, keyId]);
    return new Map(rows.map((r) => [r.sessionId, r]));
  }

  async findMany(sessionId: string, category: string, keyIds: string[]): Promise<SessionAuthKey[]> {
    return AUTH_KEYS.select(this.db, 'session_id = $1 AND category = $2 AND key_id = ANY($3::text[])', [sessionId, category, [...new Set(keyIds)]]);
  }

  /** Writes the rows, the last of each (category, keyId) winning when one is given twice. */
  async upsert(rows: SessionAuthKey[], manager: Queryable = this.db): Promise<void> {
    // a key written twice in one batch would make ON CONFLICT touch the same row twice, which PostgreSQL refuses
    const latest = new Map(rows.map((row) => [`${row.sessionId}\u0000${row.category}\u0000${row.keyId}`, row]));
    for (const chunk of chunks([...latest.values()])) {
      await manager.prepared(UPSERT, [
        chunk.map((r) => r.sessionId),
        chunk.map((r) => r.category),
        chunk.map((r) => r.keyId),
        chunk.map((r) => r.value),
        chunk.map((r) => r.schemaVersion ?? null),
        chunk.map((r) => r.updatedAt ?? null),
      ]);
    }
  }

  /** Deletes and writes in one transaction: Baileys writes related keys together (a session and its identity) and expects all or none. */
  async apply(sessionId: string, deleted: Map<string, string[]>, written: SessionAuthKey[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const [category, keyIds] of deleted) {
        for (const chunk of chunks(keyIds)) {
          await tx.query('DELETE FROM session_auth_keys WHERE session_id = $1 AND category = $2 AND key_id = ANY($3::text[])', [sessionId, category, chunk]);
        }
      }
      await this.upsert(written, tx);
    });
  }

  async clear(sessionId: string): Promise<void> {
    await this.db.query('DELETE FROM session_auth_keys WHERE session_id = $1', [sessionId]);
  }

  /** Conditional on the old ciphertext: a concurrent write of a newer value wins. */
  async replaceValue(row: SessionAuthKey, value: string): Promise<void> {
    await this.db.query(
      'UPDATE session_auth_keys SET value = $5, updated_at = $6 WHERE session_id = $1 AND category = $2 AND key_id = $3 AND value = $4',
      [row.sessionId, row.category, row.keyId, row.value, value, new Date()],
    );
  }
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += WRITE_CHUNK) out.push(items.slice(i, i + WRITE_CHUNK));
  return out;
}
