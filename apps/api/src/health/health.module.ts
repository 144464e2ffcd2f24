import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { HealthController } from './health.controller';
import { ApiMetrics, HttpMetricsMiddleware } from './http-metrics';

@Module({
  controllers: [HealthController],
  providers: [ApiMetrics],
  exports: [ApiMetrics],
})
export class HealthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpMetricsMiddleware).forRoutes('{*splat}');
  }
}
