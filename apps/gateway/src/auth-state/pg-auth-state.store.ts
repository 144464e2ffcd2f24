import { SessionAuthKey, SessionAuthKeysRepository } from '@app/database';
import { SecretBox } from '@app/crypto';
import { CredentialsUnusableError } from '../engine/credentials-unusable';
import type { AuthStateStore } from '../engine/engine.interface';
import { GroupCommit, TURN_GROUPS } from '@app/infra';
import { decodeBinaryJson, encodeBinaryJson } from '../engine/binary-json';

/** Layout of the sealed JSON in `session_auth_keys.value`; bump it (and read the old one) when the encoding changes. */
export const AUTH_STATE_SCHEMA_VERSION = 1;

/** The creds live in the same table as the signal keys, under a category no engine uses for keys. */
const CREDS_CATEGORY = 'creds';
const CREDS_KEY_ID = '';

/**
 * The auth state of this gateway's sessions in PostgreSQL (`forSession`). Every connect starts with the creds read, and
 * a failover connects hundreds of sessions at once: their reads are grouped across sessions (GroupCommit, one statement
 * at a time), as the runners' row reads are.
 */
export class PgAuthStates {
  private readonly creds: GroupCommit<string, SessionAuthKey | null>;

  constructor(
    private readonly keys: SessionAuthKeysRepository,
    private readonly box: SecretBox,
  ) {
    this.creds = new GroupCommit(
      async (sessionIds) => {
        const found = await keys.findOfSessions(sessionIds, CREDS_CATEGORY, CREDS_KEY_ID);
        return sessionIds.map((id) => found.get(id) ?? null);
      },
      { ...TURN_GROUPS, keyOf: (sessionId) => sessionId },
    );
  }

  forSession(sessionId: string): AuthStateStore {
    return new PgAuthStateStore(this.keys, this.box, sessionId, (id) => this.creds.submit(id));
  }
}

/** One session's auth state alone (no grouping): tools and tests. */
export function createPgAuthStateStore(keys: SessionAuthKeysRepository, box: SecretBox, sessionId: string): AuthStateStore {
  return new PgAuthStateStore(keys, box, sessionId, (id) => keys.find(id, CREDS_CATEGORY, CREDS_KEY_ID));
}

/**
 * A session's auth state in PostgreSQL, one row per item, every value sealed with the SecretBox.
 * Write-through: a write returns once it is committed, so any gateway can take the session over from the table.
 */
class PgAuthStateStore implements AuthStateStore {
  constructor(
    private readonly rows: SessionAuthKeysRepository,
    private readonly box: SecretBox,
    readonly sessionId: string,
    private readonly findCreds: (sessionId: string) => Promise<SessionAuthKey | null>,
  ) {}

  async readCreds<T = unknown>(): Promise<T | null> {
    const row = await this.findCreds(this.sessionId);
    if (!row) return null;
    return this.open<T>(row, (err) => new CredentialsUnusableError(`the stored credential does not decode (${err.message})`));
  }

  async writeCreds(creds: unknown): Promise<void> {
    await this.rows.upsert([this.seal(CREDS_CATEGORY, CREDS_KEY_ID, creds)]);
  }

  async readKeys<T = unknown>(category: string, ids: string[]): Promise<Record<string, T>> {
    assertKeyCategory(category);
    const found: Record<string, T> = {};
    if (ids.length === 0) return found;
    const rows = await this.rows.findMany(this.sessionId, category, ids);
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
    await this.rows.apply(this.sessionId, deleted, sealed);
  }

  async clear(): Promise<void> {
    await this.rows.clear(this.sessionId);
  }

  private seal(category: string, keyId: string, value: unknown): SessionAuthKey {
    return {
      sessionId: this.sessionId,
      category,
      keyId,
      value: this.box.encrypt(encodeBinaryJson(value)),
      schemaVersion: AUTH_STATE_SCHEMA_VERSION,
      updatedAt: new Date(),
    };
  }

  /**
   * A value the box cannot open (a key missing from SECRET_ENCRYPTION_KEY, a newer schema) is an operator's problem and
   * throws as it is: logging sessions out for it would wipe every pairing over a configuration mistake. One that opens
   * but is not JSON is garbage for good: `undecodable` says what it is instead.
   */
  private async open<T>(row: SessionAuthKey, undecodable?: (err: Error) => Error): Promise<T> {
    if (row.schemaVersion > AUTH_STATE_SCHEMA_VERSION) {
      throw new Error(
        `auth state of session ${this.sessionId} (${row.category}) has schema ${row.schemaVersion}, newer than this build reads`,
      );
    }
    let plaintext: string;
    try {
      plaintext = this.box.decrypt(row.value);
    } catch (err) {
      throw new Error(`auth state of session ${this.sessionId} (${row.category}) cannot be decrypted: ${err.message}`, { cause: err });
    }
    if (this.box.isStale(row.value)) {
      // best effort: the value read is valid either way, and the next read tries again
      await this.reseal(row, plaintext).catch(() => undefined);
    }
    try {
      return decodeBinaryJson<T>(plaintext);
    } catch (err) {
      throw undecodable && err instanceof SyntaxError ? undecodable(err) : err;
    }
  }

  /**
   * Moves a value sealed with a previous key onto the current one, so old keys can be retired.
   * Conditional on the old ciphertext: a concurrent write of a newer value wins.
   */
  private async reseal(row: SessionAuthKey, plaintext: string): Promise<void> {
    await this.rows.replaceValue(row, this.box.encrypt(plaintext));
  }
}

function assertKeyCategory(category: string): void {
  if (!category || category === CREDS_CATEGORY) throw new Error(`'${category}' is not a usable auth key category`);
}
