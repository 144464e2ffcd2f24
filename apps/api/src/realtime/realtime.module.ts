import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { EventStreamReader } from './event-stream.reader';
import { RealtimeGateway } from './realtime.gateway';

@Module({
  imports: [AuthModule],
  providers: [EventStreamReader, RealtimeGateway],
})
export class RealtimeModule {}
