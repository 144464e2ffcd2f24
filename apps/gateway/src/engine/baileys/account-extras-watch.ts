import type { BaileysEventMap, BinaryNode, proto, WAMessage, WASocket } from '@whiskeysockets/baileys';
import { type ChannelMessageView, type LabelUpdatePayload, type LabelView, STATUS_BROADCAST_JID, type StatusReceivedPayload } from '@app/contracts';
import type { EngineEvent } from '../engine.interface';
import { epochMs, fieldsOf, toUserJid, unwrapContent } from './baileys-mapping';

/**
 * What Baileys reports of CONTRACT 13, read here so the engine's own handlers stay as they are:
 * - labels: WhatsApp Business keeps them in app state; Baileys emits `labels.edit` and `labels.association` while it
 *   syncs it (all of it on a first login, patches afterwards). Each socket keeps a LabelBook of what it was told
 *   (`labels.list` answers from it) and passes every change on as a `label` engine event (`label.update`).
 * - statuses: a contact's status is a message in `status@broadcast` (the engine's message mapping leaves it out of
 *   the chats); here it becomes a `status` engine event, which the gateway announces only with `receiveStatus` on.
 * - channel posts: messages in `<id>@newsletter` chats, also left out of the chats, become `channel-message`.
 */

/** The labels an account has and the chats that carry them, as this socket was told by app-state sync. */
export class LabelBook {
  private readonly labels = new Map<string, LabelView>();
  private readonly chats = new Map<string, Set<string>>();

  get synced(): boolean {
    return this.labels.size > 0;
  }

  list(): LabelView[] {
    return [...this.labels.values()].sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
  }

  get(id: string): LabelView | null {
    return this.labels.get(id) ?? null;
  }

  /** `labels.edit` → the change to announce */
  edit(label: BaileysEventMap['labels.edit']): LabelUpdatePayload {
    if (label.deleted) {
      this.labels.delete(label.id);
      for (const ids of this.chats.values()) ids.delete(label.id);
      return { action: 'deleted', labelId: label.id, label: null, chatJid: null };
    }
    const view: LabelView = { id: label.id, name: label.name ?? '', color: typeof label.color === 'number' ? label.color : 0 };
    this.labels.set(label.id, view);
    return { action: 'edited', labelId: label.id, label: view, chatJid: null };
  }

  /** `labels.association` of a chat → the change to announce; null for a message's label (not modelled) */
  associate({ association, type }: BaileysEventMap['labels.association']): LabelUpdatePayload | null {
    if (association.type !== 'label_jid') return null;
    const chatJid = toUserJid(association.chatId) ?? association.chatId;
    this.mark(chatJid, association.labelId, type === 'add');
    return { action: type === 'add' ? 'assigned' : 'unassigned', labelId: association.labelId, label: this.get(association.labelId), chatJid };
  }

  mark(chatJid: string, labelId: string, assigned: boolean): void {
    const ids = this.chats.get(chatJid) ?? new Set<string>();
    if (assigned) ids.add(labelId);
    else ids.delete(labelId);
    this.chats.set(chatJid, ids);
  }

  labelsOf(chatJid: string): LabelView[] {
    return [...(this.chats.get(chatJid) ?? [])].sort().map((id) => this.labels.get(id) ?? { id, name: '', color: 0 });
  }
}

const BOOKS = new WeakMap<object, LabelBook>();

/** The LabelBook of a socket (made on first use). */
export function labelBookOf(sock: Pick<WASocket, 'ev'>): LabelBook {
  let book = BOOKS.get(sock);
  if (!book) BOOKS.set(sock, (book = new LabelBook()));
  return book;
}

/** A contact's status (a message in status@broadcast that is not ours), or null. */
export function statusFrom(msg: WAMessage): StatusReceivedPayload | null {
  const key = msg.key;
  if (!msg.message || key?.remoteJid !== STATUS_BROADCAST_JID || key.fromMe || !key.id) return null;
  const content = unwrapContent(msg.message);
  if (content.protocolMessage || content.reactionMessage) return null;
  const fields = fieldsOf(content);
  if (fields.type === 'unknown') return null;
  const from = toUserJid(key.participantAlt) ?? toUserJid(key.participant) ?? key.participant ?? '';
  const media = fields.media ? { mimetype: fields.media.mimetype, size: fields.media.size, filename: fields.media.filename, caption: fields.media.caption } : null;
  return { waMessageId: key.id, from, type: fields.type ?? 'text', text: fields.text ?? fields.media?.caption ?? null, media, timestamp: epochMs(msg.messageTimestamp) };
}

/** Text (or caption) and type of a channel post's content. */
function postContent(content: proto.IMessage): Pick<ChannelMessageView, 'type' | 'text'> {
  const fields = fieldsOf(unwrapContent(content));
  return { type: fields.type ?? 'text', text: fields.text ?? fields.media?.caption ?? null };
}

/** A post in a channel (`<id>@newsletter`), or null. `serverId` is the channel's message number when Baileys gives it. */
export function channelPostFrom(msg: WAMessage): ChannelMessageView | null {
  const key = msg.key as (WAMessage['key'] & { server_id?: string }) | null | undefined;
  if (!msg.message || !key?.remoteJid?.endsWith('@newsletter') || key.fromMe) return null;
  const content = unwrapContent(msg.message);
  if (content.protocolMessage || content.reactionMessage) return null;
  return { channelJid: key.remoteJid, serverId: key.server_id ?? key.id ?? '', ...postContent(content), timestamp: epochMs(msg.messageTimestamp) };
}

function childrenOf(node: BinaryNode | undefined, tag: string): BinaryNode[] {
  return Array.isArray(node?.content) ? node.content.filter((c) => c.tag === tag) : [];
}

/**
 * newsletterFetchMessages' answer: `<iq><message_updates><messages><message server_id t><plaintext>proto</plaintext>`
 * (Baileys returns the node as WhatsApp sent it), newest first.
 */
export function channelMessagesFrom(result: BinaryNode, channelJid: string, decode: (bytes: Uint8Array) => proto.IMessage): ChannelMessageView[] {
  const posts: ChannelMessageView[] = [];
  for (const updates of [result, ...childrenOf(result, 'message_updates')]) {
    for (const list of childrenOf(updates, 'messages')) {
      for (const message of childrenOf(list, 'message')) {
        const plain = childrenOf(message, 'plaintext')[0];
        const bytes = plain?.content instanceof Uint8Array ? plain.content : typeof plain?.content === 'string' ? Buffer.from(plain.content, 'binary') : null;
        let content: Pick<ChannelMessageView, 'type' | 'text'> = { type: 'unknown', text: null };
        if (bytes) {
          try {
            content = postContent(decode(bytes));
          } catch {
            // a post we cannot read is listed as unknown rather than dropped
          }
        }
        posts.push({ channelJid, serverId: message.attrs.server_id ?? message.attrs.id ?? '', ...content, timestamp: Number(message.attrs.t ?? 0) * 1000 });
      }
    }
  }
  return posts.sort((a, b) => b.timestamp - a.timestamp || Number(b.serverId) - Number(a.serverId));
}

export interface ExtrasSink {
  emit(event: EngineEvent): void;
  guard(what: string, run: () => void): void;
}

/** Registers the listeners above on a socket's events. */
export function watchAccountExtras(sock: Pick<WASocket, 'ev'>, sink: ExtrasSink): void {
  const book = labelBookOf(sock);
  sock.ev.on('labels.edit', (label) => sink.guard('labels.edit', () => sink.emit({ type: 'label', change: book.edit(label) })));
  sock.ev.on('labels.association', (update) =>
    sink.guard('labels.association', () => {
      const change = book.associate(update);
      if (change) sink.emit({ type: 'label', change });
    }),
  );
  sock.ev.on('messages.upsert', ({ messages, type }) =>
    sink.guard('messages.upsert (statuses, channels)', () => {
      if (type !== 'notify' && type !== 'append') return;
      for (const msg of messages) {
        const status = statusFrom(msg);
        if (status) sink.emit({ type: 'status', status });
        const post = channelPostFrom(msg);
        if (post) sink.emit({ type: 'channel-message', post });
      }
    }),
  );
}
