import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

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

/** Keyset pagination over sortable (ULID) ids: fetch limit+1 rows with `id > cursor` ordered by id. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, view: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const slice = more ? rows.slice(0, limit) : rows;
  return { data: slice.map(view), nextCursor: more ? slice[slice.length - 1].id : null };
}

export const pageLimit = (q: PageQueryDto) => q.limit ?? 20;
