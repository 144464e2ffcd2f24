import { Logger, Module, OnModuleDestroy } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { SessionsRepository } from '@app/database';
import { CommandBus, GatewayDirectory, RedisQrBoard, SessionPlacement } from '@app/fleet';
import { Redis, RedisKeys } from '@app/redis';
import { REDIS_CLIENT } from '@app/infra';
import { GatewaysController } from './gateways.controller';

/** The API's side of the gateway fleet: the registry reader, placement, the command bus and the QR board. */
@Module({
  controllers: [GatewaysController],
  providers: [
    {
      provide: GatewayDirectory,
      inject: [REDIS_CLIENT, RedisKeys],
      useFactory: (redis: Redis, keys: RedisKeys) => new GatewayDirectory(redis, keys),
    },
    {
      provide: CommandBus,
      inject: [ApiConfig, REDIS_CLIENT, RedisKeys],
      useFactory: (config: ApiConfig, redis: Redis, keys: RedisKeys) =>
        new CommandBus({ redisUrl: config.REDIS_URL, timeoutMs: config.COMMAND_TIMEOUT_MS }, redis, keys, new Logger(CommandBus.name)),
    },
    {
      provide: RedisQrBoard,
      inject: [REDIS_CLIENT, RedisKeys],
      useFactory: (redis: Redis, keys: RedisKeys) => new RedisQrBoard(redis, keys),
    },
    {
      provide: SessionPlacement,
      inject: [GatewayDirectory, SessionsRepository],
      useFactory: (directory: GatewayDirectory, sessions: SessionsRepository) => new SessionPlacement(directory, sessions),
    },
  ],
  exports: [GatewayDirectory, SessionPlacement, CommandBus, RedisQrBoard],
})
export class GatewaysModule implements OnModuleDestroy {
  constructor(private readonly bus: CommandBus) {}

  async onModuleDestroy(): Promise<void> {
    await this.bus.close();
  }
}
