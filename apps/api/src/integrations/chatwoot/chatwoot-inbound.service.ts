import { Injectable, Logger } from '@nestjs/common';
import { CHATWOOT_SOURCE_PREFIX, chatwootSendKey, MessageView } from '@app/contracts';
import { ChatwootRepository, Webhook } from '@app/database';
import type { Principal } from '../../common/principal';
import { MessagesService } from '../../messages/messages.service';

/** What Chatwoot POSTs to an inbox's webhook for a message (`message_created`; Message#webhook_data). */
export interface ChatwootWebhookMessage {
  event?: string;
  id?: number;
  content?: string | null;
  /** `incoming`, `outgoing`, `activity`, `template` (a string in webhook payloads) */
  message_type?: string | number;
  private?: boolean;
  source_id?: string | null;
  content_attributes?: { in_reply_to?: number | null } | null;
  sender?: { id?: number; name?: string; type?: string } | null;
  conversation?: { id?: number; contact_inbox?: { source_id?: string | null } | null; meta?: { sender?: { phone_number?: string | null; identifier?: string | null } } } | null;
  attachments?: Array<{ data_url?: string; file_type?: string; extension?: string | null }> | null;
}

export interface ChatwootWebhookOutcome {
  outcome: 'sent' | 'ignored';
  reason?: string;
  messageIds?: string[];
}

/** Chatwoot's file types (Attachment#file_type) as send types; a file is a document. */
const SEND_TYPE: Record<string, { type: string; mimetype: string }> = {
  image: { type: 'image', mimetype: 'image/jpeg' },
  audio: { type: 'audio', mimetype: 'audio/mpeg' },
  video: { type: 'video', mimetype: 'video/mp4' },
  file: { type: 'document', mimetype: 'application/octet-stream' },
};
const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
  mp3: 'audio/mpeg', ogg: 'audio/ogg', opus: 'audio/ogg', m4a: 'audio/mp4', mp4: 'video/mp4', pdf: 'application/pdf', txt: 'text/plain',
};

/**
 * An agent's reply in Chatwoot, sent to WhatsApp through the normal send path (MessagesService: rates, the durable
 * accept, the send queue) with an Idempotency-Key made of the integration and Chatwoot's message id, so a redelivered
 * webhook, two webhooks at once, or a replay after this process died mid-way never send it twice.
 */
@Injectable()
export class ChatwootInboundService {
  private readonly logger = new Logger('chatwoot');

  constructor(
    private readonly messages: MessagesService,
    private readonly chatwoot: ChatwootRepository,
  ) {}

  async handle(integration: Webhook, body: ChatwootWebhookMessage): Promise<ChatwootWebhookOutcome> {
    const ignore = (reason: string): ChatwootWebhookOutcome => ({ outcome: 'ignored', reason });
    if (!integration.active) return ignore('the integration is inactive');
    if (body.event !== 'message_created') return ignore(`event ${String(body.event)} is not a new message`);
    if (body.message_type !== 'outgoing' && body.message_type !== 1) return ignore('not an outgoing message');
    if (body.private) return ignore('a private note stays in Chatwoot');
    // what we posted ourselves (imported own messages, marks) comes back as a webhook too: no echo
    if (body.source_id?.startsWith(CHATWOOT_SOURCE_PREFIX)) return ignore('a message the gateway created');
    if (typeof body.id !== 'number' || typeof body.conversation?.id !== 'number') return ignore('no message or conversation id');
    const conversationId = body.conversation.id;
    const chatJid = (await this.chatwoot.chatOfConversation(integration.id, conversationId)) ?? chatOfContact(body);
    if (!chatJid) return ignore('the conversation has no WhatsApp contact');
    const sessionId = integration.sessionId!;
    const principal = integrationPrincipal(integration);
    const quoted = body.content_attributes?.in_reply_to ? await this.chatwoot.linkOfChatwoot(integration.id, body.content_attributes.in_reply_to) : null;
    const text = signed(body, integration.target.chatwoot?.signMessages ?? false);
    const attachments = (body.attachments ?? []).filter((a) => typeof a.data_url === 'string');
    const bodies: Record<string, unknown>[] = attachments.length
      ? attachments.map((a, i) => {
          const kind = SEND_TYPE[a.file_type ?? 'file'] ?? SEND_TYPE.file;
          const ext = (a.extension ?? a.data_url!.split('?')[0].split('.').pop() ?? '').toLowerCase();
          const mimetype = MIME_BY_EXTENSION[ext] ?? kind.mimetype;
          return { to: chatJid, type: kind.type, media: { url: a.data_url, mimetype, filename: a.data_url!.split('?')[0].split('/').pop() }, ...(i === 0 && text ? { text } : {}) };
        })
      : text
        ? [{ to: chatJid, type: 'text', text }]
        : [];
    if (!bodies.length) return ignore('nothing to send');
    const sent: MessageView[] = [];
    for (const [part, send] of bodies.entries()) {
      if (quoted?.messageId && part === 0) send.quotedMessageId = quoted.messageId;
      // Chatwoot never delivers a refused message again: accepted while the session is taken over too (sendQueued)
      const view = await this.messages.sendQueued(principal, sessionId, send, chatwootSendKey(integration.id, body.id, part));
      // the link lets the dispatcher put a failure note in this conversation and resolve replies to it
      await this.chatwoot.saveLink(integration.id, { linkKey: `cw:${body.id}:${part}`, waMessageId: view.waMessageId, messageId: view.id, chatwootMessageId: body.id, conversationId });
      sent.push(view);
    }
    this.logger.log(`chatwoot message ${body.id} of ${integration.id} accepted as ${sent.map((m) => m.id).join(', ')}`);
    return { outcome: 'sent', messageIds: sent.map((m) => m.id) };
  }
}

/** A conversation an agent opened in Chatwoot: its contact inbox's source id is the chat JID we gave it, or its phone. */
function chatOfContact(body: ChatwootWebhookMessage): string | null {
  const source = body.conversation?.contact_inbox?.source_id ?? body.conversation?.meta?.sender?.identifier ?? null;
  if (source && /^[0-9]+@(s\.whatsapp\.net|g\.us|lid)$|^[0-9-]+@g\.us$/.test(source)) return source;
  const phone = body.conversation?.meta?.sender?.phone_number?.replace(/[^0-9]/g, '');
  return phone ? `${phone}@s.whatsapp.net` : null;
}

/** The agent's name before the text when the integration signs messages (WhatsApp's bold). */
function signed(body: ChatwootWebhookMessage, sign: boolean): string {
  const content = body.content ?? '';
  const agent = body.sender?.type === 'user' || body.sender?.type === undefined ? body.sender?.name : undefined;
  if (!sign || !agent) return content;
  return content ? `*${agent}:*\n${content}` : `*${agent}:*`;
}

/** The integration acts for its organization with the one right a reply needs, on its session only. */
function integrationPrincipal(integration: Webhook): Principal {
  return {
    kind: 'apiKey',
    id: integration.id,
    organizationId: integration.organizationId,
    role: null,
    permissions: new Set(['messages:send']),
    name: 'chatwoot',
    sessionIds: new Set([integration.sessionId!]),
    allowedIps: null,
    expiresAt: null,
    tokenVersion: 0,
  };
}
