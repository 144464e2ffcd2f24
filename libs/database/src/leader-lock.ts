import { Client } from 'pg';

/** The first key of the two-key advisory lock: the namespace of leader elections, so no other advisory lock collides. */
const LEADER_LOCK_CLASS = 7274_11;

/**
 * A PostgreSQL session-level advisory lock held on a connection of its own, so leadership belongs to one live process:
 * when the process dies or its connection drops, PostgreSQL frees the lock and another candidate takes it. It never
 * touches Redis, so a Redis restart does not elect a second leader. `name` scopes the election (one fleet per name).
 */
export class PgLeaderLock {
  private client: Client | null = null;
  private held = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly name: string,
  ) {}

  /** True while this process holds the lock (taking it when free); false when another process holds it. */
  async hold(): Promise<boolean> {
    try {
      const client = await this.connection();
      if (this.held) {
        // a query that round-trips proves the connection, and with it the lock, is still there
        await client.query('SELECT 1');
        return true;
      }
      const rows = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [LEADER_LOCK_CLASS, this.name]);
      this.held = rows.rows[0]?.ok === true;
      return this.held;
    } catch {
      await this.release();
      return false;
    }
  }

  /** Gives the lock up by closing the connection (the lock cannot outlive it, whatever state the session is in). */
  async release(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.held = false;
    await client?.end().catch(() => undefined);
  }

  private async connection(): Promise<Client> {
    if (this.client) return this.client;
    const client = new Client({ connectionString: this.databaseUrl, application_name: `leader:${this.name}`.slice(0, 63) });
    // a dropped connection means the lock is gone: forget it, the next hold() reconnects and competes again
    client.on('error', () => {
      if (this.client === client) {
        this.client = null;
        this.held = false;
      }
    });
    await client.connect();
    this.client = client;
    return client;
  }
}
