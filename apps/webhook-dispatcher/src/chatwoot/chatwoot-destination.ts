import type { Readable } from 'node:stream';
import { CHATWOOT_EVENTS, CHATWOOT_SOURCE_PREFIX, ChatwootEvent, ChatwootSettings, EventEnvelope, MessageView } from '@app/contracts';
import { serviceSession, toMessageView, type ChatwootMessageLink, type ChatwootRepository, type ContactsRepository, type GroupsRepository, type MessageRow, type MessagesRepository } from '@app/database';
import type { MediaSource } from '@app/media';
import type { DeliveryMessage, Destination } from '../delivery/destinations';
import type { PostResult } from '../delivery/webhook-client';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import { ChatwootAccount, ChatwootAttachment, ChatwootCallError, ChatwootClient } from './chatwoot-client';

/**
 * The `chatwoot` destination kind (CONTRACT 16): a session's WhatsApp messages become messages of a Chatwoot API-channel
 * inbox. It is fed by the dispatchers' pipeline like every destination, so a Chatwoot that answers 500 or 429, or
 * cannot be reached, gets the event again per the retry policy (Retry-After honoured), and the delivery log shows it.
 * Each event is made idempotent by the message links table: a Chatwoot message is recorded under the WhatsApp
 * message id (or, for a mark on one, the event id) once Chatwoot created it, and a redelivered event finds it there.
 */
export interface ChatwootStores {
  chatwoot: ChatwootRepository;
  messages: MessagesRepository;
  contacts: ContactsRepository;
  groups: GroupsRepository;
  media: MediaSource;
  /** reads what the API encrypted (the webhook URL of an inbox to create) */
  decrypt: (encrypted: string) => string;
}

interface Delivery {
  integrationId: string;
  account: ChatwootAccount;
  settings: ChatwootSettings;
  envelope: EventEnvelope;
}

/** What handling an event did, for the delivery log's response snippet. */
type Handled = string;

const isGroup = (jid: string) => jid.endsWith('@g.us');
/** Chats that are not conversations with a person or a group: statuses, channels, broadcasts. */
const notAConversation = (jid: string) => jid === 'status@broadcast' || jid.endsWith('@newsletter') || jid.endsWith('@broadcast');
const digitsOf = (jid: string) => jid.split('@')[0].split(':')[0];

/** The chat an event is about (its conversation), for ordering the events of one chat. */
function chatOfEvent(envelope: EventEnvelope): string {
  const p = envelope.payload as { message?: { chatJid?: string }; chatJid?: string } | null;
  return p?.message?.chatJid ?? p?.chatJid ?? '';
}

/** The history import as the destination runs it (ChatwootImporter, which posts through the destination). */
export interface HistoryImport {
  start(): void;
  stop(): Promise<void>;
}

export class ChatwootDestination implements Destination {
  /**
   * The events of one chat are handled one at a time in this process (deliveries run concurrently): two first messages
   * of a chat would otherwise open two conversations, and a reply could be handled before the message it quotes.
   */
  private readonly chats = new Map<string, Promise<unknown>>();

  constructor(
    private readonly client: ChatwootClient,
    private readonly stores: ChatwootStores,
  ) {}

  /** Each event type's handling; the compiler makes a new Chatwoot event add its entry. */
  private readonly handlers: Record<ChatwootEvent | 'webhook.test', (d: Delivery) => Promise<Handled>> = {
    'message.received': (d) => this.received(d),
    'message.edited': (d) => this.edited(d),
    'message.revoked': (d) => this.revoked(d),
    'message.reaction': (d) => this.reaction(d),
    'message.failed': (d) => this.failed(d),
    'message.ack': (d) => this.ack(d),
    'webhook.test': async (d) => {
      const inbox = await this.client.inbox(d.account, await this.inboxOf(d));
      return `inbox ${inbox.id} (${inbox.channel_type}) reachable`;
    },
  };

  async deliver(target: WebhookTarget, message: DeliveryMessage): Promise<PostResult> {
    const started = performance.now();
    const duration = () => Math.round(performance.now() - started);
    const settings = target.target.chatwoot;
    if (!settings || !target.secret) return { statusCode: null, retryAfter: null, snippet: null, error: 'the integration has no Chatwoot settings or token', refused: false, durationMs: 0 };
    const envelope = JSON.parse(message.body.toString('utf8')) as EventEnvelope;
    const handler = (this.handlers as Record<string, (d: Delivery) => Promise<Handled>>)[envelope.event];
    try {
      const delivery = { integrationId: target.id, account: { baseUrl: target.url, accountId: settings.accountId, token: target.secret }, settings, envelope };
      const outcome = handler ? await this.serial(`${target.id} ${chatOfEvent(envelope)}`, () => handler(delivery)) : `ignored: ${envelope.event} is not shown in Chatwoot`;
      await this.stores.chatwoot.recordError(target.id, null);
      return { statusCode: 200, retryAfter: null, snippet: outcome, error: null, refused: false, durationMs: duration(), confirmed: true };
    } catch (err) {
      const e = err instanceof ChatwootCallError ? err : null;
      const reason = err instanceof Error ? err.message : String(err);
      await this.stores.chatwoot.recordError(target.id, reason).catch(() => undefined);
      return { statusCode: e?.status ?? null, retryAfter: e?.retryAfter ?? null, snippet: e?.snippet ?? null, error: reason, refused: e?.refused ?? false, durationMs: duration() };
    }
  }

  private importer: HistoryImport | null = null;

  /** Runs the history imports (`importDays`, ChatwootImporter) until the destination closes. */
  importHistory(importer: HistoryImport): void {
    this.importer = importer;
    importer.start();
  }

  async close(): Promise<void> {
    await this.importer?.stop();
    await this.client.close();
  }

  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.chats.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.chats.set(key, tail);
    void tail.then(() => {
      if (this.chats.get(key) === tail) this.chats.delete(key);
    });
    return run;
  }

  // ------------------------------------------------------------------------------------------------------------------

  /** Per integration connected without an inbox: its inbox id, found or created once per process (deliveries run concurrently). */
  private readonly inboxes = new Map<string, Promise<number>>();

  /** The integration's inbox: the one given at connect, else the one created for it (created now when there is none yet). */
  private inboxOf(d: Pick<Delivery, 'integrationId' | 'account' | 'settings'>): Promise<number> {
    if (d.settings.inboxId !== null) return Promise.resolve(d.settings.inboxId);
    const key = `${d.integrationId} ${d.account.baseUrl} ${d.account.accountId}`;
    let inbox = this.inboxes.get(key);
    if (!inbox) {
      inbox = this.provideInbox(d);
      this.inboxes.set(key, inbox);
      // a failed call is tried again by the next delivery
      inbox.catch(() => this.inboxes.delete(key));
    }
    return inbox;
  }

  /**
   * Creates the integration's API-channel inbox, whose webhook is the integration's URL, and stores its id. A crash
   * between the creation and the store leaves an inbox with our webhook in the account: it is looked for first and
   * taken, so no second inbox is made. The first id stored wins (two dispatchers at once).
   */
  private async provideInbox(d: Pick<Delivery, 'integrationId' | 'account'>): Promise<number> {
    const request = await this.stores.chatwoot.inboxRequestOf(d.integrationId);
    if (request?.inboxId) return request.inboxId;
    if (!request?.webhookUrlEncrypted) throw new Error('the integration has no inbox and nothing to create one with (PUT it again)');
    const webhookUrl = this.stores.decrypt(request.webhookUrlEncrypted);
    const found = (await this.client.inboxes(d.account)).find((i) => i.webhook_url === webhookUrl);
    const inbox = found ?? (await this.client.createApiInbox(d.account, request.name ?? 'WhatsApp', webhookUrl));
    return this.stores.chatwoot.saveInbox(d.integrationId, inbox.id);
  }

  private async received(d: Delivery): Promise<Handled> {
    const m = (d.envelope.payload as { message: MessageView }).message;
    if (notAConversation(m.chatJid)) return `ignored: ${m.chatJid} is not a conversation`;
    if (isGroup(m.chatJid) && !d.settings.groups) return 'ignored: group messages are off for this integration';
    return this.mirror(d, m, 'live');
  }

  /** Whether a message of the log belongs in Chatwoot (a person's or, with `groups`, a group's chat). */
  shows(m: Pick<MessageView, 'chatJid' | 'type'>, groups: boolean): boolean {
    return !notAConversation(m.chatJid) && (groups || !isGroup(m.chatJid)) && m.type !== 'reaction';
  }

  /** An imported message of the history, in its chat's turn with the chat's live events. */
  importMessage(d: Pick<Delivery, 'integrationId' | 'account' | 'settings'>, m: MessageView): Promise<Handled> {
    return this.serial(`${d.integrationId} ${m.chatJid}`, () => this.mirror(d, m, 'history'));
  }

  /**
   * Shows one WhatsApp message in its conversation, once: the link stored under its WhatsApp id says it is there.
   * `history`: an imported message keeps its direction (an own message shows as outgoing).
   */
  async mirror(d: Pick<Delivery, 'integrationId' | 'account' | 'settings'>, m: MessageView, origin: 'live' | 'history'): Promise<Handled> {
    // shown already: received before, or an agent's reply sent from Chatwoot (linked under its Chatwoot id)
    const known = await this.stores.chatwoot.linkOfWa(d.integrationId, m.waMessageId);
    if (known) return `already in Chatwoot as message ${known.chatwootMessageId}`;
    const conversationId = await this.conversationOf(d, m.chatJid, m.organizationId, m.sessionId, m.direction === 'in' ? m.from : null);
    // an own message (sent from the phone or the API) imported as outgoing would come back as an agent's reply:
    // its source id marks it as ours (no echo)
    const quoted = m.quotedMessageId ? await this.shown(d, await this.stores.messages.findById(m.quotedMessageId), m.chatJid) : null;
    const attachment = m.media ? await this.attachmentOf(m) : null;
    let content = contentOf(m, attachment === null && m.media !== null);
    if (isGroup(m.chatJid) && m.direction === 'in' && m.from) content = `**${await this.nameOf(m.organizationId, m.sessionId, m.from)}:** ${content}`;
    const attributes: Record<string, unknown> = {};
    if (quoted) attributes.in_reply_to = quoted.chatwootMessageId;
    const id = await this.post(d, m.chatJid, conversationId, {
      content,
      message_type: m.direction === 'in' ? 'incoming' : 'outgoing',
      source_id: `${CHATWOOT_SOURCE_PREFIX}${m.waMessageId}`,
      ...(Object.keys(attributes).length ? { content_attributes: attributes } : {}),
      // an imported message keeps its WhatsApp time (Chatwoot shows it in the message's info)
      ...(origin === 'history' ? { external_created_at: Math.floor(m.createdAt / 1000) } : {}),
    }, attachment ?? undefined);
    await this.stores.chatwoot.saveLink(d.integrationId, { linkKey: m.waMessageId, waMessageId: m.waMessageId, messageId: m.id, chatwootMessageId: id, conversationId });
    return `message ${id} in conversation ${conversationId}`;
  }

  private async edited(d: Delivery): Promise<Handled> {
    const { message: m } = d.envelope.payload as { message: MessageView; previousText: string | null };
    return this.mark(d, m.waMessageId, 'incoming', `✏️ Edited: ${m.text ?? ''}`);
  }

  private async revoked(d: Delivery): Promise<Handled> {
    const p = d.envelope.payload as { waMessageId: string };
    return this.mark(d, p.waMessageId, 'incoming', '🗑️ This message was deleted on WhatsApp');
  }

  private async reaction(d: Delivery): Promise<Handled> {
    const p = d.envelope.payload as { waMessageId: string; from: string; emoji: string };
    const who = await this.nameOf(d.envelope.organizationId, d.envelope.sessionId!, p.from);
    return this.mark(d, p.waMessageId, 'note', p.emoji ? `${who} reacted ${p.emoji}` : `${who} removed their reaction`);
  }

  /** A send made for an agent's message that failed: a private note with the reason, in its conversation. */
  private async failed(d: Delivery): Promise<Handled> {
    const m = (d.envelope.payload as { message: MessageView }).message;
    const origin = await this.stores.chatwoot.linkOfMessage(d.integrationId, m.id);
    if (!origin) return 'ignored: the failed message was not sent from Chatwoot';
    return this.mark(d, m.waMessageId, 'note', `⚠️ Not delivered to WhatsApp: ${m.error ?? 'unknown reason'}`, origin);
  }

  /**
   * A receipt of a message Chatwoot shows as outgoing (an agent's reply, an imported own message): its ticks in
   * Chatwoot (CONTRACT 16, "read receipts mark Chatwoot's messages read where its API allows"). A group member's own
   * receipt is not shown: the message's comes once every member reached the step. Setting a status again is harmless,
   * so a redelivered receipt needs no link of its own.
   */
  private async ack(d: Delivery): Promise<Handled> {
    const p = d.envelope.payload as { messageId: string; status: string; participant?: string };
    if (p.participant) return 'ignored: a group member\'s receipt';
    const status = p.status === 'delivered' ? 'delivered' : p.status === 'read' || p.status === 'played' ? 'read' : null;
    if (!status) return `ignored: receipt ${p.status}`;
    const link = await this.stores.chatwoot.linkOfMessage(d.integrationId, p.messageId);
    if (!link) return 'ignored: the message is not in Chatwoot';
    try {
      await this.client.updateMessageStatus(d.account, link.conversationId, link.chatwootMessageId, status);
    } catch (err) {
      // a Chatwoot older than the route, or an inbox of another channel: nothing to retry
      if (err instanceof ChatwootCallError && (err.status === 404 || err.status === 403)) return `ignored: Chatwoot answered ${err.status} to the status of message ${link.chatwootMessageId}`;
      throw err;
    }
    return `message ${link.chatwootMessageId} marked ${status}`;
  }

  /** A mark on a message Chatwoot shows (edit, delete, reaction, failure): a reply to it, once per event. */
  private async mark(d: Delivery, waMessageId: string, as: 'incoming' | 'note', content: string, origin?: ChatwootMessageLink): Promise<Handled> {
    const key = d.envelope.id;
    const done = await this.stores.chatwoot.link(d.integrationId, key);
    if (done) return `already in Chatwoot as message ${done.chatwootMessageId}`;
    const target = origin ?? (await this.stores.chatwoot.linkOfWa(d.integrationId, waMessageId)) ?? (await this.shown(d, await this.stores.messages.findByWaId(d.envelope.sessionId!, waMessageId), null));
    if (!target) return `ignored: message ${waMessageId} is not in Chatwoot`;
    const chatJid = chatOfEvent(d.envelope);
    // keeps the contact's name current, as a message does
    if (chatJid && !isGroup(chatJid)) await this.conversationOf(d, chatJid, d.envelope.organizationId, d.envelope.sessionId!, null);
    const id = await this.client.createMessage(d.account, target.conversationId, {
      content,
      message_type: 'incoming',
      private: as === 'note',
      source_id: `${CHATWOOT_SOURCE_PREFIX}${key}`,
      content_attributes: { in_reply_to: target.chatwootMessageId },
    });
    await this.stores.chatwoot.saveLink(d.integrationId, { linkKey: key, waMessageId: null, messageId: null, chatwootMessageId: id, conversationId: target.conversationId });
    return `message ${id} in conversation ${target.conversationId}`;
  }

  /**
   * The Chatwoot message showing a message of the log, showing it first when it is not yet (a reply or a mark can be
   * handled before the message it names: deliveries are concurrent and retried). null for a message of another chat
   * or one Chatwoot does not show.
   */
  private async shown(d: Pick<Delivery, 'integrationId' | 'account' | 'settings'>, row: MessageRow | null, chatJid: string | null): Promise<ChatwootMessageLink | null> {
    if (!row) return null;
    const link = await this.stores.chatwoot.linkOfMessage(d.integrationId, row.id);
    if (link) return link;
    if ((chatJid !== null && row.chatJid !== chatJid) || row.direction !== 'in' || notAConversation(row.chatJid) || (isGroup(row.chatJid) && !d.settings.groups)) return null;
    await this.mirror(d, toMessageView(row), 'live');
    return this.stores.chatwoot.linkOfMessage(d.integrationId, row.id);
  }

  /** Posts into the chat's conversation; a conversation Chatwoot no longer has (404) is forgotten, so a retry opens a new one. */
  private async post(d: Pick<Delivery, 'integrationId' | 'account'>, chatJid: string, conversationId: number, m: Parameters<ChatwootClient['createMessage']>[2], a?: ChatwootAttachment): Promise<number> {
    try {
      return await this.client.createMessage(d.account, conversationId, m, a);
    } catch (err) {
      if (err instanceof ChatwootCallError && err.status === 404) await this.stores.chatwoot.forgetConversation(d.integrationId, chatJid);
      throw err;
    }
  }

  /**
   * The chat's conversation: stored, or made now. The contact is found by phone number (or, for a group or a LID
   * without a number, by its JID as identifier) or created, named by push name (a group by its subject).
   */
  private async conversationOf(d: Pick<Delivery, 'integrationId' | 'account' | 'settings'>, chatJid: string, organizationId: string, sessionId: string, sender: string | null): Promise<number> {
    const stored = await this.stores.chatwoot.conversationOf(d.integrationId, chatJid);
    if (stored) {
      // the contact was named by its number (its push name came later): name it now
      if (!isGroup(chatJid) && stored.contactName.startsWith('+')) {
        const name = await this.nameOf(organizationId, sessionId, sender ?? chatJid);
        if (!name.startsWith('+')) {
          await this.client.renameContact(d.account, stored.contactId, name);
          await this.stores.chatwoot.renameContact(d.integrationId, chatJid, name);
        }
      }
      return stored.conversationId;
    }
    const inboxId = await this.inboxOf(d);
    const phone = chatJid.endsWith('@s.whatsapp.net') ? `+${digitsOf(chatJid)}` : null;
    const name = isGroup(chatJid)
      ? ((await this.stores.groups.storedOf(serviceSession(sessionId), chatJid))?.subject ?? chatJid)
      : await this.nameOf(organizationId, sessionId, sender ?? chatJid);
    const found = (await this.client.searchContacts(d.account, phone ?? chatJid)).find((c) => (phone ? c.phone_number === phone : c.identifier === chatJid));
    let contactId: number;
    let sourceId: string;
    if (found) {
      contactId = found.id;
      sourceId = await this.client.createContactInbox(d.account, contactId, inboxId, chatJid);
    } else {
      const created = await this.client.createContact(d.account, { inbox_id: inboxId, name, identifier: chatJid, ...(phone ? { phone_number: phone } : {}) });
      contactId = created.contact.id;
      sourceId = created.sourceId ?? (await this.client.createContactInbox(d.account, contactId, inboxId, chatJid));
    }
    const conversationId = await this.client.createConversation(d.account, { source_id: sourceId, inbox_id: inboxId, contact_id: contactId });
    return (await this.stores.chatwoot.saveConversation(d.integrationId, { chatJid, contactId, conversationId, sourceId, contactName: found?.name ?? name })).conversationId;
  }

  /** A person's push name (or address-book name) as the session knows it, else their number. */
  private async nameOf(organizationId: string, sessionId: string, jid: string): Promise<string> {
    const c = await this.stores.contacts.find(serviceSession(sessionId, organizationId), jid);
    return c?.pushName || c?.name || (c?.phoneNumber ? `+${c.phoneNumber.replace(/^\+/, '')}` : `+${digitsOf(jid)}`);
  }

  /** The media's bytes from the network that holds them; null when it dropped them (the text then says so). */
  private async attachmentOf(m: MessageView): Promise<ChatwootAttachment | null> {
    const row = await this.stores.messages.findById(m.id);
    if (!row?.mediaRef || !m.media) return null;
    let stream: Readable;
    try {
      stream = await this.stores.media.open(row.mediaRef);
    } catch {
      return null;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
    const ext = m.media.mimetype.split('/')[1]?.split(';')[0] ?? 'bin';
    return { bytes: Buffer.concat(chunks), mimetype: m.media.mimetype, filename: m.media.filename ?? `${m.type}-${m.waMessageId}.${ext}` };
  }
}

/** The text a Chatwoot agent reads for a WhatsApp message of any type. */
export function contentOf(m: MessageView, mediaGone: boolean): string {
  const gone = mediaGone ? ' (the media is no longer available)' : '';
  switch (m.type) {
    case 'location': {
      const l = m.location!;
      const label = [l.name, l.address].filter(Boolean).join(', ');
      return `📍 ${label ? `${label} ` : ''}https://maps.google.com/?q=${l.latitude},${l.longitude}`;
    }
    case 'contact':
      return `👤 ${m.contact?.fullName ?? ''} ${m.contact?.phoneNumber ?? ''}`.trim();
    case 'text':
      return m.text ?? '';
    default:
      return (m.media?.caption ?? m.text ?? '') + gone || (m.media ? '' : `[${m.type}]`);
  }
}

export { CHATWOOT_EVENTS };
