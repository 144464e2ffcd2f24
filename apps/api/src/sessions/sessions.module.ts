import { Module } from '@nestjs/common';
import { GatewaysModule } from '../gateways/gateways.module';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

/** Sessions and their groups; gateways (registry, placement, command bus) come with it. */
@Module({
  imports: [GatewaysModule],
  controllers: [SessionsController],
  providers: [SessionsService],
  exports: [SessionsService],
})
export class SessionsModule {}
