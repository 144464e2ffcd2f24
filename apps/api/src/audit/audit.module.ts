import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AuditLogController } from './audit-log.controller';
import { AuditRouteInterceptor } from './audit-route.interceptor';
import { AuditRetention } from './audit-retention';
import { AuditTrail } from './audit-trail';

/** The audit log (CONTRACT 14): the trail every management service writes into, its reading endpoint and its retention. */
@Global()
@Module({
  controllers: [AuditLogController],
  providers: [AuditTrail, AuditRetention, { provide: APP_INTERCEPTOR, useClass: AuditRouteInterceptor }],
  exports: [AuditTrail],
})
export class AuditModule {}
