import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { ApiOpsServer } from './api-ops-server';
import { HealthController } from './health.controller';
import { ApiMetrics, HttpMetricsMiddleware } from './http-metrics';

@Module({
  controllers: [HealthController],
  providers: [ApiMetrics, ApiOpsServer],
  exports: [ApiMetrics, ApiOpsServer],
})
export class HealthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpMetricsMiddleware).forRoutes('{*splat}');
  }
}
