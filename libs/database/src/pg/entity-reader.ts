import { getMetadataArgsStorage } from 'typeorm';
import type { Queryable } from './db';
import { type PreparedStatement, preparedStatement } from './prepared-statement';

/** An entity's table and its columns (database name, property), read from its decorators, its SQL's one source. */
export function entityColumns(entity: abstract new () => object): { table: string; columns: Array<[column: string, property: string]>; json: Set<string> } {
  const storage = getMetadataArgsStorage();
  const table = storage.tables.find((t) => t.target === entity)?.name;
  if (!table) throw new Error(`${entity.name} is not an entity`);
  const own = storage.columns.filter((c) => c.target === entity);
  const columns = own.map((c): [string, string] => [c.options.name ?? c.propertyName, c.propertyName]);
  const json = new Set(own.filter((c) => c.options.type === 'jsonb').map((c) => c.propertyName));
  return { table, columns, json };
}

/**
 * An entity's table as plain SQL built from its column decorators (once): the whole-row SELECT and INSERT its
 * repository runs instead of TypeORM's entity API, each row mapped to an instance of the entity. The condition,
 * order and values stay the repository's.
 */
export class EntityTable<T extends object> {
  private shape: ReturnType<typeof entityColumns> & { list: string } | null = null;

  constructor(private readonly entity: new () => T) {}

  private get meta() {
    if (!this.shape) {
      const meta = entityColumns(this.entity);
      this.shape = { ...meta, list: meta.columns.map(([column]) => `"${column}"`).join(', ') };
    }
    return this.shape;
  }

  /** `SELECT <every column> FROM <table> WHERE <where> <tail>` (`tail`: ORDER BY, LIMIT). */
  async select(db: Queryable, where: string, values: readonly unknown[], tail = ''): Promise<T[]> {
    const { table, list } = this.meta;
    const rows = await db.query<Record<string, unknown>>(`SELECT ${list} FROM "${table}" WHERE ${where}${tail ? ` ${tail}` : ''}`, values);
    return rows.map((row) => this.fromRow(row));
  }

  /** The first row `select` finds, or null. */
  async selectOne(db: Queryable, where: string, values: readonly unknown[]): Promise<T | null> {
    return (await this.select(db, where, values, 'LIMIT 1'))[0] ?? null;
  }

  /**
   * Inserts the entity's defined properties (the others take the column's default) and answers the row inserted; with
   * `conflict` (the key's columns), a row of that key is overwritten with them instead.
   */
  async insert(db: Queryable, entity: Partial<T>, conflict?: string): Promise<T> {
    const { table, list, columns, json } = this.meta;
    const given = columns.filter(([, property]) => (entity as Record<string, unknown>)[property] !== undefined);
    const values = given.map(([, property]) => {
      const value = (entity as Record<string, unknown>)[property];
      return json.has(property) && value !== null ? JSON.stringify(value) : value;
    });
    const names = given.map(([column]) => `"${column}"`).join(', ');
    const params = given.map((_, i) => `$${i + 1}`).join(', ');
    const overwrite = conflict ? ` ON CONFLICT (${conflict}) DO UPDATE SET ${given.map(([column]) => `"${column}" = EXCLUDED."${column}"`).join(', ')}` : '';
    const [row] = await db.query<Record<string, unknown>>(`INSERT INTO "${table}" (${names}) VALUES (${params})${overwrite} RETURNING ${list}`, values);
    return this.fromRow(row);
  }

  /**
   * `UPDATE <table> SET <the patch's defined properties> WHERE <where>` (`where` over `values`, `$1`…); answers how many
   * rows it changed. A patch with nothing defined changes nothing.
   */
  async update(db: Queryable, patch: Partial<T>, where: string, values: readonly unknown[]): Promise<number> {
    const { table, columns, json } = this.meta;
    const given = columns.filter(([, property]) => (patch as Record<string, unknown>)[property] !== undefined);
    if (given.length === 0) return 0;
    const sets = given.map(([column], i) => `"${column}" = $${values.length + i + 1}`).join(', ');
    const params = given.map(([, property]) => {
      const value = (patch as Record<string, unknown>)[property];
      return json.has(property) && value !== null ? JSON.stringify(value) : value;
    });
    return db.affected(`UPDATE "${table}" SET ${sets} WHERE ${where}`, [...values, ...params]);
  }

  fromRow(row: Record<string, unknown>): T {
    const entity = new this.entity() as Record<string, unknown>;
    for (const [column, property] of this.meta.columns) entity[property] = row[column];
    return entity as T;
  }
}

/**
 * A prepared read of one whole entity without TypeORM's query builder and transformer: the SELECT list and the
 * row → entity mapping come from the entity's own column decorators (read once, on first use), so they cannot drift
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

  async findOne(db: Queryable, values: unknown[]): Promise<T | null> {
    return (await this.findMany(db, values))[0] ?? null;
  }

  /** Every row the condition matches, each as an entity. */
  async findMany(db: Queryable, values: unknown[]): Promise<T[]> {
    const { statement, columns } = (this.prepared ??= this.prepare());
    const rows = await db.prepared<Record<string, unknown>>(statement, values);
    return rows.map((row) => {
      // a plain loop: this runs on every authenticated read, and the pairs array and object in between were garbage
      const entity = new this.entity() as Record<string, unknown>;
      for (const [column, property] of columns) entity[property] = row[column];
      return entity as T;
    });
  }

  private prepare() {
    const { table, columns } = entityColumns(this.entity);
    const list = columns.map(([column]) => `"${column}"`).join(', ');
    return { statement: preparedStatement(this.name, `SELECT ${list} FROM "${table}" WHERE ${this.where}`), columns };
  }
}
