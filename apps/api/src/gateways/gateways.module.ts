import { Module } from '@nestjs/common';
import { CommandBus } from './command-bus';
import { GatewayDirectory } from './gateway-directory';
import { GatewaysController } from './gateways.controller';
import { SessionPlacement } from './session-placement';

@Module({
  controllers: [GatewaysController],
  providers: [GatewayDirectory, SessionPlacement, CommandBus],
  exports: [GatewayDirectory, SessionPlacement, CommandBus],
})
export class GatewaysModule {}
