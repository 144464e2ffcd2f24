import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import type { PageRequest, RowPage } from '@app/database';

export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, description: 'page size (default 20)' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100)
  limit?: number;

  @ApiPropertyOptional({ pattern: '^[A-Za-z0-9_]{1,64}$', description: 'nextCursor of the previous page' })
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_]{1,64}$/)
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export const pageLimit = (q: PageQueryDto) => q.limit ?? 20;

/** The query part of a page request, as the repositories' `page(...)` methods take it. */
export const pageRequest = (q: PageQueryDto): PageRequest => ({ limit: pageLimit(q), cursor: q.cursor });

export const toPage = <R, T>(page: RowPage<R>, view: (row: R) => T): Page<T> => ({ data: page.rows.map(view), nextCursor: page.nextCursor });
