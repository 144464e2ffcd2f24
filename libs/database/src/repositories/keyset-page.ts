import { And, FindOperator, FindOptionsOrder, FindOptionsWhere, MoreThan, Repository } from 'typeorm';

export interface PageRequest {
  limit: number;
  /** the last id of the previous page */
  cursor?: string;
}

export interface RowPage<R> {
  rows: R[];
  nextCursor: string | null;
}

/** Keyset pagination over sortable (ULID) ids: fetch limit+1 rows with `id > cursor` ordered by id. */
export async function keysetPage<R extends { id: string }>(repo: Repository<R>, where: FindOptionsWhere<R>, page: PageRequest): Promise<RowPage<R>> {
  // a where that already narrows `id` (a scoped view) keeps its narrowing beside the cursor's
  const own = (where as { id?: FindOperator<string> }).id;
  const after = page.cursor ? (own ? And(own, MoreThan(page.cursor)) : MoreThan(page.cursor)) : undefined;
  const rows = await repo.find({
    where: { ...where, ...(after ? { id: after } : {}) } as FindOptionsWhere<R>,
    order: { id: 'ASC' } as FindOptionsOrder<R>,
    take: page.limit + 1,
  });
  const more = rows.length > page.limit;
  const slice = more ? rows.slice(0, page.limit) : rows;
  return { rows: slice, nextCursor: more ? slice[slice.length - 1].id : null };
}
