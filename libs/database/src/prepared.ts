import type { DataSource, EntityManager } from 'typeorm';

/**
 * A statement of a hot path: parsed and planned once per connection (a named prepared statement of the PostgreSQL
 * protocol), then only bound and executed. An unnamed statement is parsed and planned on every call, which was most of
 * PostgreSQL's CPU per message and per API request (docs/decisions.md, "Prepared statements on the hot paths").
 * Names are global per connection: one constant per statement, defined next to the repository that owns its table.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

const NAMES = new Map<string, string>();

/** Declares a statement once; the same name for a different text is a programming error, refused at load. */
export function preparedStatement(name: string, text: string): PreparedStatement {
  const known = NAMES.get(name);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${name} is declared twice with different SQL`);
  NAMES.set(name, text);
  return { name, text };
}

export interface PreparedResult<R> {
  rows: R[];
  rowCount: number;
}

interface PgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/**
 * Runs a prepared statement on the pool TypeORM opened (no QueryRunner per call), or inside the transaction of
 * `manager` on its connection. Rows come back as node-postgres parses them, exactly as `DataSource.query` returns them.
 */
export async function runPrepared<R>(db: DataSource | EntityManager, statement: PreparedStatement, values: unknown[]): Promise<PreparedResult<R>> {
  const result = await connectionOf(db).query({ name: statement.name, text: statement.text, values });
  return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
}

function connectionOf(db: DataSource | EntityManager): PgQueryable {
  const runner = 'queryRunner' in db ? db.queryRunner : undefined;
  if (runner) {
    // inside a transaction: its connection, which TypeORM connected when the transaction began
    const client = (runner as unknown as { databaseConnection?: PgQueryable }).databaseConnection;
    if (!client) throw new Error('prepared statement on a transaction that holds no connection');
    return client;
  }
  const source = 'driver' in db ? db : db.connection;
  const pool = (source.driver as unknown as { master?: PgQueryable }).master;
  if (!pool) throw new Error('prepared statement before the data source is initialized');
  return pool;
}

/**
 * A prepared read of one whole entity without TypeORM's query builder and transformer: the SELECT list and the
 * row → entity mapping come from the entity's own column metadata (read once, on first use), so they cannot drift
 * from it. For plain columns (no transformers), which is what every entity here has.
 */
export class EntityReader<T extends object> {
  private prepared: { statement: PreparedStatement; columns: Array<[column: string, property: string]> } | null = null;

  /** `where`: the condition, over the statement's parameters (`id = $1 AND organization_id = $2`). */
  constructor(
    private readonly entity: new () => T,
    private readonly name: string,
    private readonly where: string,
  ) {}

  async findOne(db: DataSource, values: unknown[]): Promise<T | null> {
    return (await this.findMany(db, values))[0] ?? null;
  }

  /** Every row the condition matches, each as an entity. */
  async findMany(db: DataSource, values: unknown[]): Promise<T[]> {
    const { statement, columns } = (this.prepared ??= this.prepare(db));
    const { rows } = await runPrepared<Record<string, unknown>>(db, statement, values);
    return rows.map((row) => {
      // a plain loop: this runs on every authenticated read, and the pairs array and object in between were garbage
      const entity = new this.entity() as Record<string, unknown>;
      for (const [column, property] of columns) entity[property] = row[column];
      return entity as T;
    });
  }

  private prepare(db: DataSource) {
    const meta = db.getMetadata(this.entity);
    const columns = meta.columns.map((c): [string, string] => [c.databaseName, c.propertyName]);
    const list = columns.map(([column]) => `"${column}"`).join(', ');
    return { statement: preparedStatement(this.name, `SELECT ${list} FROM "${meta.tableName}" WHERE ${this.where}`), columns };
  }
}
