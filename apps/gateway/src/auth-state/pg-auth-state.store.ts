import { DataSource, EntityManager, In } from 'typeorm';
import { SessionAuthKey } from '@app/database';
import { SecretBox } from '@app/crypto';
import type { AuthStateStore } from '../engine/engine.interface';
import { decodeAuthValue, encodeAuthValue } from './auth-state-json';

/** Layout of the sealed JSON in `session_auth_keys.value`; bump it (and read the old one) when the encoding changes. */
export const AUTH_STATE_SCHEMA_VERSION = 1;

/** The creds live in the same table as the signal keys, under a category no engine uses for keys. */
const CREDS_CATEGORY = 'creds';
const CREDS_KEY_ID = '';

/** Baileys uploads hundreds of pre-keys at once; chunks keep each statement well under PostgreSQL's parameter limit. */
const WRITE_CHUNK = 500;

/**
 * A session's auth state in PostgreSQL, one row per item, every value sealed with the SecretBox.
 * Write-through: a write returns once it is committed, so any gateway can take the session over from the table.
 */
export function createPgAuthStateStore(db: DataSource, box: SecretBox, sessionId: string): AuthStateStore {
  return new PgAuthStateStore(db, box, sessionId);
}

class PgAuthStateStore implements AuthStateStore {
  constructor(
    private readonly db: DataSource,
    private readonly box: SecretBox,
    readonly sessionId: string,
  ) {}

  private get rows() {
    return this.db.getRepository(SessionAuthKey);
  }

  async readCreds<T = unknown>(): Promise<T | null> {
    const row = await this.rows.findOneBy({ sessionId: this.sessionId, category: CREDS_CATEGORY, keyId: CREDS_KEY_ID });
    if (!row) return null;
    return this.open<T>(row);
  }

  async writeCreds(creds: unknown): Promise<void> {
    await this.upsert(this.db.manager, [this.seal(CREDS_CATEGORY, CREDS_KEY_ID, creds)]);
  }

  async readKeys<T = unknown>(category: string, ids: string[]): Promise<Record<string, T>> {
    assertKeyCategory(category);
    const found: Record<string, T> = {};
    if (ids.length === 0) return found;
    const rows = await this.rows.findBy({ sessionId: this.sessionId, category, keyId: In([...new Set(ids)]) });
    for (const row of rows) found[row.keyId] = await this.open<T>(row);
    return found;
  }

  async writeKeys(data: Record<string, Record<string, unknown | null>>): Promise<void> {
    const sealed: SessionAuthKey[] = [];
    const deleted = new Map<string, string[]>();
    for (const [category, items] of Object.entries(data)) {
      assertKeyCategory(category);
      for (const [keyId, value] of Object.entries(items ?? {})) {
        if (value === null || value === undefined) {
          const ids = deleted.get(category);
          if (ids) ids.push(keyId);
          else deleted.set(category, [keyId]);
        } else {
          sealed.push(this.seal(category, keyId, value));
        }
      }
    }
    if (sealed.length === 0 && deleted.size === 0) return;
    // one transaction: Baileys writes related keys together (a session and its identity) and expects all or none
    await this.db.transaction(async (tx) => {
      for (const [category, keyIds] of deleted) {
        for (const chunk of chunks(keyIds)) {
          await tx.delete(SessionAuthKey, { sessionId: this.sessionId, category, keyId: In(chunk) });
        }
      }
      await this.upsert(tx, sealed);
    });
  }

  async clear(): Promise<void> {
    await this.rows.delete({ sessionId: this.sessionId });
  }

  private seal(category: string, keyId: string, value: unknown): SessionAuthKey {
    return {
      sessionId: this.sessionId,
      category,
      keyId,
      value: this.box.encrypt(encodeAuthValue(value)),
      schemaVersion: AUTH_STATE_SCHEMA_VERSION,
      updatedAt: new Date(),
    };
  }

  private async upsert(manager: EntityManager, rows: SessionAuthKey[]): Promise<void> {
    // a key written twice in one batch would make ON CONFLICT touch the same row twice, which PostgreSQL refuses
    const latest = new Map(rows.map((row) => [`${row.category}\u0000${row.keyId}`, row]));
    for (const chunk of chunks([...latest.values()])) {
      await manager.upsert(SessionAuthKey, chunk, ['sessionId', 'category', 'keyId']);
    }
  }

  private async open<T>(row: SessionAuthKey): Promise<T> {
    if (row.schemaVersion > AUTH_STATE_SCHEMA_VERSION) {
      throw new Error(
        `auth state of session ${this.sessionId} (${row.category}) has schema ${row.schemaVersion}, newer than this build reads`,
      );
    }
    let plaintext: string;
    try {
      plaintext = this.box.decrypt(row.value);
    } catch (err) {
      throw new Error(`auth state of session ${this.sessionId} (${row.category}) cannot be decrypted: ${err.message}`);
    }
    if (this.box.isStale(row.value)) {
      // best effort: the value read is valid either way, and the next read tries again
      await this.reseal(row, plaintext).catch(() => undefined);
    }
    return decodeAuthValue<T>(plaintext);
  }

  /**
   * Moves a value sealed with a previous key onto the current one, so old keys can be retired.
   * Conditional on the old ciphertext: a concurrent write of a newer value wins.
   */
  private async reseal(row: SessionAuthKey, plaintext: string): Promise<void> {
    await this.db
      .createQueryBuilder()
      .update(SessionAuthKey)
      .set({ value: this.box.encrypt(plaintext), updatedAt: new Date() })
      .where('session_id = :sessionId AND category = :category AND key_id = :keyId AND value = :value', {
        sessionId: row.sessionId,
        category: row.category,
        keyId: row.keyId,
        value: row.value,
      })
      .execute();
  }
}

function assertKeyCategory(category: string): void {
  if (!category || category === CREDS_CATEGORY) throw new Error(`'${category}' is not a usable auth key category`);
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += WRITE_CHUNK) out.push(items.slice(i, i + WRITE_CHUNK));
  return out;
}
