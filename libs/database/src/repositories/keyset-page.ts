import type { EntityTable, Queryable } from '../pg';

export interface PageRequest {
  limit: number;
  /** the last id of the previous page */
  cursor?: string;
}

export interface RowPage<R> {
  rows: R[];
  nextCursor: string | null;
}

/**
 * Keyset pagination over sortable (ULID) ids: limit+1 rows of `table` matching `where` (over `values`) with
 * `id > cursor`, ordered by id.
 */
export async function keysetPage<R extends { id: string }>(
  db: Queryable,
  table: EntityTable<R>,
  where: string,
  values: readonly unknown[],
  page: PageRequest,
): Promise<RowPage<R>> {
  const params = [...values, ...(page.cursor ? [page.cursor] : []), page.limit + 1];
  const after = page.cursor ? ` AND id > $${values.length + 1}` : '';
  const rows = await table.select(db, `${where}${after}`, params, `ORDER BY id LIMIT $${params.length}`);
  const more = rows.length > page.limit;
  const slice = more ? rows.slice(0, page.limit) : rows;
  return { rows: slice, nextCursor: more ? slice[slice.length - 1].id : null };
}
