import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import type { DataSource } from 'typeorm';
import { checkDependencies } from '@app/observability';
import type { Redis } from '@app/redis';
import { Public } from '../auth/auth.decorators';
import { REDIS_CLIENT } from '@app/infra';

@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
  ) {}

  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() res: Response) {
    const checks = await checkDependencies(this.db, this.redis);
    const ok = checks.postgres && checks.redis;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'not_ready', checks });
  }
}
