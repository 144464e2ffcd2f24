import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AuditLogRepository } from '@app/database';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { pageLimit } from '../common/pagination';
import { AuditLogQueryDto, AuditPage } from './audit-log.dto';

@ApiTags('audit-log')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited')
@Controller('audit-log')
export class AuditLogController {
  constructor(private readonly log: AuditLogRepository) {}

  @Get()
  @RequirePermissions('audit:read')
  @ApiEndpoint(
    'Read the audit log',
    'The organization\'s entries, newest first, paged by `cursor`: every change of the management surface and every refusal of one, with who, from where and which fields (never a value of a secret). Read-only: no API edits it.',
    'validation_error',
  )
  @ApiOkResponse({ type: AuditPage })
  async list(@CurrentPrincipal() p: Principal, @Query() q: AuditLogQueryDto): Promise<AuditPage> {
    const page = await this.log.page(
      p.organizationId,
      { actor: q.actor, action: q.action, targetType: q.targetType, targetId: q.targetId, outcome: q.outcome, from: q.from ? new Date(q.from) : undefined, to: q.to ? new Date(q.to) : undefined },
      pageLimit(q),
      q.cursor,
    );
    return { data: page.rows, nextCursor: page.nextCursor };
  }
}
