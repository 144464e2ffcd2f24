import { Module } from '@nestjs/common';
import { GatewaysModule } from '../gateways/gateways.module';
import { MediaStoreModule } from '../messages/media-store.module';
import { SessionsController } from './sessions.controller';
import { SessionActions } from './session-actions';
import { SessionsService } from './sessions.service';

/**
 * Sessions and their groups; gateways (registry, placement, command bus) come with it. SessionActions is the one way
 * other modules (chats, contacts, groups, …) ask a connected session to do something on the network.
 */
@Module({
  imports: [GatewaysModule, MediaStoreModule],
  controllers: [SessionsController],
  providers: [SessionsService, SessionActions],
  exports: [SessionsService, SessionActions],
})
export class SessionsModule {}
