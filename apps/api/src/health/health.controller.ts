import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { checkDependencies } from '@app/observability';
import type { Redis } from '@app/redis';
import { Public } from '../common/auth.decorators';
import { ApiPublicEndpoint } from '../common/api-docs';
import { REDIS_CLIENT } from '@app/infra';
import { Db } from '@app/database';

export class HealthResponse {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
}

export class DependencyChecks {
  @ApiProperty({ description: 'PostgreSQL answered' }) postgres: boolean;
  @ApiProperty({ description: 'Redis answered' }) redis: boolean;
}

export class ReadinessResponse {
  @ApiProperty({ enum: ['ready', 'not_ready'] }) status: 'ready' | 'not_ready';
  @ApiProperty({ type: DependencyChecks }) checks: DependencyChecks;
}

/** Probes, without credentials or rate limit; the ops port (API_OPS_PORT) serves them too, beside /metrics. */
@ApiTags('health')
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly db: Db,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
  ) {}

  @Get('healthz')
  @ApiPublicEndpoint('Liveness', 'The process answers HTTP. No credentials; not rate limited.')
  @ApiOkResponse({ type: HealthResponse })
  healthz(): HealthResponse {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiPublicEndpoint('Readiness', 'PostgreSQL and Redis both answer: 200 `ready`, otherwise 503 `not_ready` with the failed check. No credentials; not rate limited.')
  @ApiOkResponse({ type: ReadinessResponse, description: 'both dependencies answer' })
  @ApiServiceUnavailableResponse({ type: ReadinessResponse, description: 'PostgreSQL or Redis does not answer; `checks` says which' })
  async readyz(@Res() res: Response) {
    const checks = await checkDependencies(this.db, this.redis);
    const ok = checks.postgres && checks.redis;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'not_ready', checks });
  }
}
