import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint } from '../common/api-docs';
import { OverviewResponse } from './overview.dto';
import { StatsService } from './stats.service';

/** Figures about the caller's organization (docs/dashboard.md, "Overview"). */
@ApiTags('stats')
@ApiBearerAuth()
@ApiSecurity('api-key')
@Controller('stats')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get('overview')
  @RequirePermissions('sessions:read')
  @ApiEndpoint(
    'The organization at a glance',
    'Sessions by status; messages received and sent per hour over the last 24 hours; webhook deliveries per hour (delivered, failed, p95 latency) and the webhooks failing now with their last error (these two need `webhooks:manage`, else null).',
    'unauthorized',
    'forbidden',
    'rate_limited',
  )
  @ApiOkResponse({ type: OverviewResponse })
  overview(@CurrentPrincipal() p: Principal): Promise<OverviewResponse> {
    return this.stats.overview(p.organizationId, p.permissions.has('webhooks:manage'));
  }
}
