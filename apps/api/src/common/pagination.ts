import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { FindOptionsOrder, FindOptionsWhere, MoreThan, Repository } from 'typeorm';

export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_]{1,64}$/)
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export const pageLimit = (q: PageQueryDto) => q.limit ?? 20;

/** Keyset pagination over sortable (ULID) ids: fetch limit+1 rows with `id > cursor` ordered by id. */
export async function findPage<R extends { id: string }, T>(
  repo: Repository<R>,
  where: FindOptionsWhere<R>,
  query: PageQueryDto,
  view: (row: R) => T,
): Promise<Page<T>> {
  const limit = pageLimit(query);
  const rows = await repo.find({
    where: { ...where, ...(query.cursor ? { id: MoreThan(query.cursor) } : {}) } as FindOptionsWhere<R>,
    order: { id: 'ASC' } as FindOptionsOrder<R>,
    take: limit + 1,
  });
  const more = rows.length > limit;
  const slice = more ? rows.slice(0, limit) : rows;
  return { data: slice.map(view), nextCursor: more ? slice[slice.length - 1].id : null };
}
