import { Global, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { REDIS_CLIENT } from '@app/infra';
import { LoginBackoff, Redis, RedisKeys, RequestRateLimits } from '@app/redis';
import { AuthModule } from '../auth/auth.module';
import { LimitMetrics } from './limit-metrics';
import { LoginThrottle } from './login-throttle';
import { OrganizationQuotas } from './organization-quotas';
import { RateLimitMiddleware } from './rate-limit.middleware';

/** Quotas per organization and request rate limits (docs/api.md: Quotas, Rate limits). */
@Global()
@Module({
  imports: [AuthModule],
  providers: [
    LimitMetrics,
    OrganizationQuotas,
    LoginThrottle,
    { provide: RequestRateLimits, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new RequestRateLimits(redis, keys) },
    { provide: LoginBackoff, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new LoginBackoff(redis, keys) },
  ],
  exports: [OrganizationQuotas, LoginThrottle],
})
export class LimitsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RateLimitMiddleware).exclude('healthz', 'readyz').forRoutes('{*splat}');
  }
}
