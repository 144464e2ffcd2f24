import { Module } from '@nestjs/common';
import { REDIS_CLIENT } from '@app/infra';
import { SendRateLimiter } from '@app/messaging';
import { Redis, RedisKeys } from '@app/redis';
import { GatewaysModule } from '../gateways/gateways.module';
import { MediaStoreModule } from '../media/media-store.module';
import { SessionsController } from './sessions.controller';
import { SessionActions } from './session-actions';
import { SessionsService } from './sessions.service';
import { SessionProxyPolicy } from './session-proxy.policy';

/**
 * Sessions and their groups; gateways (registry, placement, command bus) come with it. SessionActions is the one way
 * other modules (chats, contacts, groups, …) ask a connected session to do something on the network.
 */
@Module({
  imports: [GatewaysModule, MediaStoreModule],
  controllers: [SessionsController],
  providers: [
    SessionsService,
    SessionProxyPolicy,
    SessionActions,
    // the session's send rates are counted (and kept for a send's one round trip) there; a PATCH of the rates drops them
    { provide: SendRateLimiter, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new SendRateLimiter(redis, keys) },
  ],
  exports: [SessionsService, SessionActions, SendRateLimiter],
})
export class SessionsModule {}
