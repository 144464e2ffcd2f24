import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { SessionsModule } from '../sessions/sessions.module';
import { ContactsController, ProfileController } from './contacts.controller';
import { ContactsService } from './contacts.service';

/** Contacts, profile and presence of a session (CONTRACT 12); the network through SessionActions, media through MediaFetcher. */
@Module({
  imports: [SessionsModule, MessagesModule],
  controllers: [ContactsController, ProfileController],
  providers: [ContactsService],
})
export class ContactsModule {}
