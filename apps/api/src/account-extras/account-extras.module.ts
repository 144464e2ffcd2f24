import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { SessionsModule } from '../sessions/sessions.module';
import { AccountExtrasController } from './account-extras.controller';
import { AccountExtrasService } from './account-extras.service';

/** Labels, status posts and channels (CONTRACT 13): session actions, and status posts through the send path. */
@Module({
  imports: [SessionsModule, MessagesModule],
  controllers: [AccountExtrasController],
  providers: [AccountExtrasService],
})
export class AccountExtrasModule {}
