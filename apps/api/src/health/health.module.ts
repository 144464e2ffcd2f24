import { Module } from '@nestjs/common';
import { ApiOpsServer } from './api-ops-server';
import { HealthController } from './health.controller';
import { ApiMetrics } from '../common/http-metrics';

@Module({
  controllers: [HealthController],
  providers: [ApiMetrics, ApiOpsServer],
  exports: [ApiMetrics, ApiOpsServer],
})
export class HealthModule {}
