import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { SessionAuthKey } from '../entities/session-auth-key.entity';
import { EntityReader } from '../prepared';

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
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get repo() {
    return this.db.getRepository(SessionAuthKey);
  }

  async find(sessionId: string, category: string, keyId: string): Promise<SessionAuthKey | null> {
    return this.repo.findOneBy({ sessionId, category, keyId });
  }

  /** `find` of one item for many sessions in one statement; sessions without it are left out. */
  async findOfSessions(sessionIds: readonly string[], category: string, keyId: string): Promise<Map<string, SessionAuthKey>> {
    if (sessionIds.length === 0) return new Map();
    const rows = await FIND_ITEM_OF_SESSIONS.findMany(this.db, [sessionIds, category, keyId]);
    return new Map(rows.map((r) => [r.sessionId, r]));
  }

  async findMany(sessionId: string, category: string, keyIds: string[]): Promise<SessionAuthKey[]> {
    return this.repo.findBy({ sessionId, category, keyId: In([...new Set(keyIds)]) });
  }

  /** Writes the rows, the last of each (category, keyId) winning when one is given twice. */
  async upsert(rows: SessionAuthKey[], manager: EntityManager = this.db.manager): Promise<void> {
    // a key written twice in one batch would make ON CONFLICT touch the same row twice, which PostgreSQL refuses
    const latest = new Map(rows.map((row) => [`${row.sessionId}\u0000${row.category}\u0000${row.keyId}`, row]));
    for (const chunk of chunks([...latest.values()])) {
      await manager.upsert(SessionAuthKey, chunk, ['sessionId', 'category', 'keyId']);
    }
  }

  /** Deletes and writes in one transaction: Baileys writes related keys together (a session and its identity) and expects all or none. */
  async apply(sessionId: string, deleted: Map<string, string[]>, written: SessionAuthKey[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const [category, keyIds] of deleted) {
        for (const chunk of chunks(keyIds)) {
          await tx.delete(SessionAuthKey, { sessionId, category, keyId: In(chunk) });
        }
      }
      await this.upsert(written, tx);
    });
  }

  async clear(sessionId: string): Promise<void> {
    await this.repo.delete({ sessionId });
  }

  /** Conditional on the old ciphertext: a concurrent write of a newer value wins. */
  async replaceValue(row: SessionAuthKey, value: string): Promise<void> {
    await this.db
      .createQueryBuilder()
      .update(SessionAuthKey)
      .set({ value, updatedAt: new Date() })
      .where('session_id = :sessionId AND category = :category AND key_id = :keyId AND value = :value', {
        sessionId: row.sessionId,
        category: row.category,
        keyId: row.keyId,
        value: row.value,
      })
      .execute();
  }
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += WRITE_CHUNK) out.push(items.slice(i, i + WRITE_CHUNK));
  return out;
}
