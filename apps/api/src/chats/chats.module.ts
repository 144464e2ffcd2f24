import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { ChatsController } from './chats.controller';
import { ChatsService } from './chats.service';

/** Chats (CONTRACT 12): the session's conversations, their messages and their marks (read, archive, pin, mute). */
@Module({
  imports: [SessionsModule],
  controllers: [ChatsController],
  providers: [ChatsService],
})
export class ChatsModule {}
