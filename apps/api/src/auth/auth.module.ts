import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiConfig } from '@app/config';
import { AuthController } from './auth.controller';
import { AuthGuard } from './auth.guard';
import { AuthService } from './auth.service';
import { PrincipalCache } from './principal-cache';
import { PrincipalFeed } from './principal-feed';

@Module({
  controllers: [AuthController],
  providers: [
    AuthService,
    {
      provide: PrincipalCache,
      inject: [ApiConfig],
      useFactory: (c: ApiConfig) =>
        new PrincipalCache({ ttlMs: c.PRINCIPAL_CACHE_TTL_MS, maxEntries: c.PRINCIPAL_CACHE_MAX_ENTRIES }, { now: () => Date.now() }),
    },
    PrincipalFeed,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [AuthService, PrincipalFeed],
})
export class AuthModule {}
