import { Global, Module } from '@nestjs/common';
import { REDIS_CLIENT } from '@app/infra';
import { LoginBackoff, Redis, RedisKeys, RequestRateLimits } from '@app/redis';
import { AuthModule } from '../auth/auth.module';
import { LoginGate } from '../auth/login-gate';
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
    { provide: LoginGate, useExisting: LoginThrottle },
    RateLimitMiddleware,
    { provide: RequestRateLimits, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new RequestRateLimits(redis, keys) },
    { provide: LoginBackoff, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new LoginBackoff(redis, keys) },
  ],
  // the middleware runs in the API's prelude (bootstrap), one Express layer with the rest of what precedes the routes
  exports: [OrganizationQuotas, LoginGate, RateLimitMiddleware],
})
export class LimitsModule {}
