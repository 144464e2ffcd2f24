import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import { ApiConfig, ConfigOverrides } from '@app/config';
import { randomUlid } from '@app/crypto';
import { InfraModule } from '@app/infra';
import { httpLoggerOptions, logDestination } from '@app/observability';
import { AuthModule } from './auth/auth.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { DeliveriesModule } from './deliveries/deliveries.module';
import { HealthModule } from './health/health.module';
import { LimitsModule } from './limits/limits.module';
import { MessagesModule } from './messages/messages.module';
import { RealtimeModule } from './realtime/realtime.module';
import { SessionsModule } from './sessions/sessions.module';
import { WebhooksModule } from './webhooks/webhooks.module';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `overrides`: configuration decided by the caller over the environment's (the CLI boots the API silent). */
function imports(overrides: ConfigOverrides) {
  return [
    InfraModule.forRoot({ app: 'api', config: ApiConfig, overrides }),
    LoggerModule.forRootAsync({
      inject: [ApiConfig],
      useFactory: (config: ApiConfig) => {
        return {
          // the Express 5 wildcard: '*' is a legacy path Nest converts with a warning on every boot
          forRoutes: [{ path: '{*splat}', method: RequestMethod.ALL }],
          pinoHttp: [
            {
              ...httpLoggerOptions('api', config.LOG_LEVEL),
              // echo a caller's X-Request-Id when it is sane, otherwise mint one; always returned as a header
              genReqId: (req: IncomingMessage, res: ServerResponse) => {
                const incoming = req.headers['x-request-id'];
                const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUlid();
                res.setHeader('X-Request-Id', id);
                return id;
              },
            },
            logDestination(config.LOG_FORMAT, 1),
          ],
        };
      },
    }),
    HealthModule,
    LimitsModule,
    AuthModule,
    WebhooksModule,
    RealtimeModule,
    DeliveriesModule,
    SessionsModule,
    MessagesModule,
    DashboardModule,
  ];
}

@Module({})
export class AppModule {
  static forRoot(overrides: ConfigOverrides = {}): DynamicModule {
    return { module: AppModule, imports: imports(overrides) };
  }
}
