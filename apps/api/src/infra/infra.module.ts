import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiConfig, loadConfigOrExit } from '@app/config';
import { SecretBox } from '@app/crypto';
import { DatabaseModule } from '@app/database';
import { EventPublisher } from '@app/events';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { REDIS_CLIENT } from './tokens';

/**
 * Process-wide infrastructure of the API: validated config, PostgreSQL, Redis, secrets, event publishing.
 * Everything is injectable so tests can swap it.
 */
@Global()
@Module({
  imports: [DatabaseModule.forRoot(ApiConfig)],
  providers: [
    { provide: ApiConfig, useFactory: () => loadConfigOrExit(ApiConfig) },
    { provide: REDIS_CLIENT, inject: [ApiConfig], useFactory: (c: ApiConfig) => createRedis(c.REDIS_URL) },
    { provide: RedisKeys, inject: [ApiConfig], useFactory: (c: ApiConfig) => new RedisKeys(c.REDIS_KEY_PREFIX) },
    { provide: SecretBox, inject: [ApiConfig], useFactory: (c: ApiConfig) => new SecretBox(c.encryptionKeys) },
    {
      provide: EventPublisher,
      inject: [getDataSourceToken(), REDIS_CLIENT, RedisKeys],
      useFactory: (db: DataSource, redis: Redis, keys: RedisKeys) => new EventPublisher(db, redis, keys.prefix),
    },
  ],
  exports: [ApiConfig, REDIS_CLIENT, RedisKeys, SecretBox, EventPublisher],
})
export class InfraModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CLIENT) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
