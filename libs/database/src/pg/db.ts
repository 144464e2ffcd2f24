import type { OnApplicationShutdown } from '@nestjs/common';
import { Pool, type PoolClient, type PoolConfig, type QueryConfig } from 'pg';
import type { PreparedStatement } from './prepared-statement';

/** A row as node-postgres parses it, before a repository maps it. */
export type Row = Record<string, unknown>;

/**
 * What a repository runs its SQL on: the pool (each statement on any free connection) or one transaction's connection
 * (`Tx`). Rows come back as node-postgres parses them; `R` names their columns, the repository maps them.
 */
export interface Queryable {
  /** The rows of one statement, parsed and planned on every call (an unnamed statement). */
  query<R = Row>(sql: string, values?: readonly unknown[]): Promise<R[]>;
  /** The rows of a named statement, parsed and planned once per connection (a hot path: `preparedStatement`). */
  prepared<R = Row>(statement: PreparedStatement, values: readonly unknown[]): Promise<R[]>;
  /** How many rows a write changed (an UPDATE or DELETE without RETURNING), unnamed or prepared. */
  affected(statement: string | PreparedStatement, values?: readonly unknown[]): Promise<number>;
}

type Target = Pick<Pool | PoolClient, 'query'>;

function config(statement: string | PreparedStatement, values: readonly unknown[]): QueryConfig {
  return typeof statement === 'string'
    ? { text: statement, values: values as unknown[] }
    : { name: statement.name, text: statement.text, values: values as unknown[] };
}

abstract class Statements implements Queryable {
  protected abstract target(): Target;

  async query<R = Row>(sql: string, values: readonly unknown[] = []): Promise<R[]> {
    return (await this.target().query(config(sql, values))).rows as R[];
  }

  async prepared<R = Row>(statement: PreparedStatement, values: readonly unknown[]): Promise<R[]> {
    return (await this.target().query(config(statement, values))).rows as R[];
  }

  async affected(statement: string | PreparedStatement, values: readonly unknown[] = []): Promise<number> {
    return (await this.target().query(config(statement, values))).rowCount ?? 0;
  }
}

/**
 * One transaction's connection: the `Queryable` a repository method takes when it must run inside the caller's
 * transaction. Only `Db.transaction` makes one, and it refuses statements once the transaction has ended.
 */
export class Tx extends Statements {
  private open = true;

  /** @internal made by `Db.transaction` only */
  constructor(private readonly client: PoolClient) {
    super();
  }

  protected target(): Target {
    if (!this.open) throw new Error('statement on a transaction that has ended');
    return this.client;
  }

  /** @internal */
  end(): void {
    this.open = false;
  }
}

/**
 * The process's PostgreSQL pool (node-postgres), owned by `libs/database` and provided by `DatabaseModule`: every
 * repository's statements run on it, and `transaction` runs work on one of its connections between BEGIN and COMMIT.
 * TypeORM keeps the data source that runs migrations (docs/decisions.md, "One data layer on node-postgres").
 */
export class Db extends Statements implements OnApplicationShutdown {
  private constructor(private readonly pool: Pool) {
    super();
  }

  /** A pool of the given settings; an idle connection's error (a server restart) is the next checkout's, not a crash. */
  static open(settings: PoolConfig): Db {
    const pool = new Pool(settings);
    pool.on('error', () => undefined);
    return new Db(pool);
  }

  protected target(): Target {
    return this.pool;
  }

  /**
   * Runs `work` in a transaction on one connection: committed when it resolves, rolled back when it throws (the
   * error is rethrown). A connection that could not roll back is closed, not handed to the next caller.
   */
  async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx = new Tx(client);
    let broken: Error | undefined;
    // a connection the server ends mid-transaction (idle_in_transaction_session_timeout, a restart) fails the
    // statement under way; heard here, its error event does not end the process, and the connection is discarded
    const lost = (err: Error) => (broken = err);
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await work(tx);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
      throw err;
    } finally {
      tx.end();
      client.off('error', lost);
      client.release(broken);
    }
  }

  /** Closes the pool (idempotent): its connections end once released. */
  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
