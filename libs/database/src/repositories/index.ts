import { ApiKeysRepository } from './api-keys.repository';
import { GroupsRepository } from './groups.repository';
import { OrganizationsRepository } from './organizations.repository';
import { SessionAuthKeysRepository } from './session-auth-keys.repository';
import { SessionsRepository } from './sessions.repository';
import { UsersRepository } from './users.repository';
import { WebhooksRepository } from './webhooks.repository';
import { MessagesRepository } from './messages.repository';
import { MessageQueueRepository } from './message-queue.repository';
import { MessageAcksRepository } from './message-acks.repository';
import { DeliveriesRepository } from './deliveries.repository';
import { DeliveryLogRepository } from './delivery-log.repository';
import { DeliveryAttemptsRepository } from './delivery-attempts.repository';
import { EventsRepository } from './events.repository';
import { ContactsRepository } from './contacts.repository';
import { ChatsRepository } from './chats.repository';
import { StatusPostsRepository } from './status-posts.repository';
import { MediaBlobsRepository } from './media-blobs.repository';
import { FollowedChannelsRepository } from './followed-channels.repository';
import { LeaderLeasesRepository } from './leader-leases.repository';
import { CampaignsRepository } from './campaigns.repository';
import { InvitationsRepository } from './invitations.repository';
import { PasswordResetsRepository } from './password-resets.repository';
import { AuditLogRepository } from './audit-log.repository';
import { ChatwootRepository } from './chatwoot.repository';

export * from './keyset-page';
export * from './deliveries.repository';
export * from './delivery-log.repository';
export * from './delivery-attempts.repository';
export * from './events.repository';
export * from './messages.repository';
export * from './message-queue.repository';
export * from './message-acks.repository';
export { toMessageView } from './message-rows';
export type { AckOutcome, EditedMessage, MemberAckOutcome, MessageFilter, MessageRow, NewMessage, QueueHead, SentRecord } from './message-rows';
export * from './api-keys.repository';
export * from './groups.repository';
export * from './organizations.repository';
export * from './session-auth-keys.repository';
export * from './sessions.repository';
export * from './session-scope';
export * from './users.repository';
export * from './webhooks.repository';
export * from './contacts.repository';
export * from './chats.repository';
export * from './status-posts.repository';
export * from './media-blobs.repository';
export * from './followed-channels.repository';
export * from './leader-leases.repository';
export * from './campaigns.repository';
export * from './invitations.repository';
export * from './password-resets.repository';
export * from './audit-log.repository';

/** Every repository, for DatabaseModule to provide. */
export const REPOSITORIES = [
  CampaignsRepository,
  OrganizationsRepository,
  UsersRepository,
  ApiKeysRepository,
  SessionsRepository,
  SessionAuthKeysRepository,
  GroupsRepository,
  WebhooksRepository,
  MessagesRepository,
  MessageQueueRepository,
  MessageAcksRepository,
  DeliveriesRepository,
  DeliveryLogRepository,
  DeliveryAttemptsRepository,
  EventsRepository,
  ContactsRepository,
  ChatsRepository,
  StatusPostsRepository,
  MediaBlobsRepository,
  FollowedChannelsRepository,
  LeaderLeasesRepository,
  InvitationsRepository,
  PasswordResetsRepository,
  AuditLogRepository,
  ChatwootRepository,
];
export * from './chatwoot.repository';
