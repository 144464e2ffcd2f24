import { Injectable } from '@nestjs/common';
import {
  CHANNEL_JID_PATTERN,
  channelInviteCode,
  ChannelMessageView,
  ChannelView,
  ChatLabelsView,
  DomainError,
  LabelView,
  MessageView,
  normalizeChatJid,
  STATUS_BROADCAST_JID,
} from '@app/contracts';
import { MessagesRepository, StatusPostsRepository } from '@app/database';
import type { Principal } from '../common/principal';
import { ApiValidationPipe } from '../common/validation.pipe';
import { MessagesService } from '../messages/messages.service';
import { SessionActions } from '../sessions/session-actions';
import { ChannelMessagesQueryDto, STATUS_AUDIENCE_MAX, StatusPostDto } from './dto/account-extras.dto';

/** One field's problem, in the envelope the global pipe uses (CONTRACT 5). */
function invalid(field: string, problem: string): DomainError {
  return new DomainError('validation_error', 'request is invalid', { fields: { [field]: [problem] } });
}

/**
 * Labels (WhatsApp Business), status posts and channels (CONTRACT 13). Labels and channels are session actions
 * (SessionActions.perform: 404 across organizations, 409 unless working, 503 without a gateway); what they change is
 * announced by the network itself (`label.update` comes back from WhatsApp's app-state sync, and from the simulator),
 * so nothing is stored or published here. A status post is a send (CONTRACT 10): MessagesService accepts it, to
 * status@broadcast, with its audience recorded (StatusPostsRepository) before the message row.
 */
@Injectable()
export class AccountExtrasService {
  private readonly validation = new ApiValidationPipe();

  constructor(
    private readonly actions: SessionActions,
    private readonly messages: MessagesService,
    private readonly messageLog: MessagesRepository,
    private readonly statusPosts: StatusPostsRepository,
  ) {}

  async labels(organizationId: string, sessionId: string): Promise<{ data: LabelView[] }> {
    return this.actions.perform(organizationId, sessionId, 'labels.list', {});
  }

  async addChatLabel(organizationId: string, sessionId: string, jid: string, labelId: string): Promise<ChatLabelsView> {
    const chatJid = await this.chatJid(organizationId, sessionId, jid);
    return this.actions.perform(organizationId, sessionId, 'labels.addToChat', { chatJid, labelId });
  }

  async removeChatLabel(organizationId: string, sessionId: string, jid: string, labelId: string): Promise<ChatLabelsView> {
    const chatJid = await this.chatJid(organizationId, sessionId, jid);
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(labelId)) throw invalid('labelId', 'labelId must be a label id');
    return this.actions.perform(organizationId, sessionId, 'labels.removeFromChat', { chatJid, labelId });
  }

  /**
   * Order as a send's: session (404) → body (422) → the session's number known (409) → audience → the send's own
   * checks (409, idempotency, 429) → the audience recorded → the message row.
   */
  async postStatus(principal: Principal, sessionId: string, raw: unknown, idempotencyKey: string | undefined): Promise<MessageView> {
    const session = await this.actions.session(principal.organizationId, sessionId);
    const body = (await this.validation.transform(raw, { type: 'body', metatype: StatusPostDto, data: '' })) as StatusPostDto;
    const type = body.type ?? 'text';
    if (type === 'text' && body.media !== undefined) throw invalid('media', 'media is not allowed for type text');
    if (type !== 'text' && body.backgroundColor !== undefined) throw invalid('backgroundColor', 'backgroundColor is only for text statuses');
    if (!session.waJid) throw new DomainError('conflict', `the session is ${session.status}: it has no WhatsApp account yet`, { status: session.status });
    const audience = body.audience ?? (await this.messageLog.contactChatJids(session, STATUS_AUDIENCE_MAX));
    if (audience.length === 0) throw invalid('audience', 'the session has no contacts yet: name the audience');
    const backgroundColor = body.backgroundColor ?? null;
    // the send's own body: its `to` is only there to pass the send's checks; the row's chat is status@broadcast
    const send = { to: session.waJid, type, ...(body.text !== undefined ? { text: body.text } : {}), ...(body.media ? { media: body.media } : {}) };
    return this.messages.send(principal, sessionId, send, idempotencyKey, {
      chatJid: STATUS_BROADCAST_JID,
      record: (messageId) => this.statusPosts.record(messageId, session, { audience, backgroundColor }),
    });
  }

  async channels(organizationId: string, sessionId: string): Promise<{ data: ChannelView[] }> {
    return this.actions.perform(organizationId, sessionId, 'channels.list', {});
  }

  async follow(organizationId: string, sessionId: string, invite: string): Promise<ChannelView> {
    await this.actions.session(organizationId, sessionId);
    const code = channelInviteCode(invite);
    if (!code) throw invalid('invite', 'invite must be a channel invite code or a https://whatsapp.com/channel/… link');
    return this.actions.perform(organizationId, sessionId, 'channels.follow', { invite: code });
  }

  async unfollow(organizationId: string, sessionId: string, jid: string): Promise<void> {
    await this.actions.session(organizationId, sessionId);
    await this.actions.perform(organizationId, sessionId, 'channels.unfollow', { jid: this.channelJid(jid) });
  }

  async channelMessages(organizationId: string, sessionId: string, jid: string, query: ChannelMessagesQueryDto): Promise<{ data: ChannelMessageView[] }> {
    await this.actions.session(organizationId, sessionId);
    return this.actions.perform(organizationId, sessionId, 'channels.messages', { jid: this.channelJid(jid), count: query.count ?? 20 });
  }

  /** The chat of the path, normalized like a send's `to` (404 for a stranger's session comes first). */
  private async chatJid(organizationId: string, sessionId: string, jid: string): Promise<string> {
    await this.actions.session(organizationId, sessionId);
    const chatJid = normalizeChatJid(jid);
    if (!chatJid) throw invalid('jid', 'jid must be a phone number or a JID (…@s.whatsapp.net, …@lid, …@g.us)');
    return chatJid;
  }

  private channelJid(jid: string): string {
    if (!CHANNEL_JID_PATTERN.test(jid)) throw invalid('jid', 'jid must be a channel JID like 120363012345678901@newsletter');
    return jid;
  }
}
