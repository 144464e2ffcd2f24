import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { BaseConfig, ConfigOverrides, loadConfigOrExit } from '@app/config';
import { SecretBox } from '@app/crypto';
import { DatabaseModule, Db } from '@app/database';
import { EventPublisher } from '@app/events';
import { createLogger, type Logger } from '@app/observability';
import { createRedis, createRequestPathRedis, Redis, RedisKeys } from '@app/redis';
import { MetricsRegistry } from './metrics';
import { OpsEndpoints } from './ops-endpoints';
import { LOGGER, REDIS_CLIENT } from './tokens';

export interface InfraOptions<C extends BaseConfig> {
  /** the app's name in logs */
  app: string;
  /** the app's validated configuration class, loaded once at boot */
  config: new () => C;
  /** PostgreSQL pool size of this process */
  poolMax?: number;
  /** every prepared statement of this process runs its generic plan (`GENERIC_PLANS`): for a process of key lookups only */
  genericPlans?: boolean;
  /** configuration values decided in code, over the environment's */
  overrides?: ConfigOverrides;
  /** labels added to every series of the metrics registry, beside `app` */
  metricLabels?: Record<string, string>;
  /**
   * The shared Redis client serves requests (the API): its commands fail fast while Redis is unreachable instead of
   * waiting for it (createRequestPathRedis). Background processes leave it off: their work waits and resumes.
   */
  redisFailFast?: boolean;
}

/**
 * What every long-running process shares, whichever app it is: its validated configuration (as its own class and as
 * BaseConfig), PostgreSQL (TypeORM data source + every repository), Redis (client + key prefix), secrets, the event
 * publisher, the metrics registry (and the ops endpoints serving it) and a pino logger. The API, the gateway and the dispatcher each import it once.
 */
@Module({})
export class InfraModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CLIENT) private readonly redis: Redis) {}

  static forRoot<C extends BaseConfig>(options: InfraOptions<C>): DynamicModule {
    const configClass = options.config;
    return {
      module: InfraModule,
      global: true,
      imports: [DatabaseModule.forRoot(configClass, options.poolMax, options.genericPlans)],
      providers: [
        { provide: configClass, useFactory: () => loadConfigOrExit(configClass, undefined, options.overrides) },
        { provide: BaseConfig, useExisting: configClass },
        { provide: LOGGER, inject: [BaseConfig], useFactory: (c: BaseConfig) => createLogger(options.app, c.LOG_LEVEL, c.LOG_FORMAT) },
        {
          provide: REDIS_CLIENT,
          inject: [BaseConfig, LOGGER],
          useFactory: (c: BaseConfig, logger: Logger) => {
            const redis = options.redisFailFast ? createRequestPathRedis(c.REDIS_URL) : createRedis(c.REDIS_URL);
            // a Redis restart is an event to log, not a crash (ioredis reconnects by itself)
            redis.on('error', (err) => logger.warn({ reason: err.message }, 'redis connection error'));
            return redis;
          },
        },
        { provide: RedisKeys, inject: [BaseConfig], useFactory: (c: BaseConfig) => new RedisKeys(c.REDIS_KEY_PREFIX) },
        { provide: SecretBox, inject: [BaseConfig], useFactory: (c: BaseConfig) => new SecretBox(c.encryptionKeys) },
        {
          provide: EventPublisher,
          inject: [Db, REDIS_CLIENT, RedisKeys],
          useFactory: (db: Db, redis: Redis, keys: RedisKeys) => new EventPublisher(db, redis, keys.prefix),
        },
        { provide: MetricsRegistry, useFactory: () => new MetricsRegistry({ app: options.app, ...options.metricLabels }) },
        {
          provide: OpsEndpoints,
          inject: [MetricsRegistry, Db, REDIS_CLIENT],
          useFactory: (metrics: MetricsRegistry, db: Db, redis: Redis) => new OpsEndpoints(metrics, db, redis),
        },
      ],
      exports: [DatabaseModule, configClass, BaseConfig, LOGGER, REDIS_CLIENT, RedisKeys, SecretBox, EventPublisher, MetricsRegistry, OpsEndpoints],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
