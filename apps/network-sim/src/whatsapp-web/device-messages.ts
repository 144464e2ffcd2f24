/**
 * What a message the device sent over WhatsApp Web is, once its recipients decrypted it, and how the network records
 * it: texts (a forward keeps `forwarded`), locations, contact cards, polls (their secret stays with the front door for
 * the votes), reactions, votes on its own polls (opened with that secret), the reply and mentions any of them carries
 * (its contextInfo: `stanzaId`, `mentionedJid`), and its edits and deletes for everyone (protocolMessage
 * MESSAGE_EDIT / REVOKE), which change the original's entry through the same handlers the device protocol uses
 * (actions/message-actions.ts), so `GET /sim/messages` shows them the same whichever door was used.
 */
import { contactFromVcard, type CompilesWhen, type ContactContent, type LocationContent, type MessageKeyRef, type OutboundMessageType } from '@app/contracts';
import { createHash } from 'node:crypto';
import type { DeviceLink, SimNetwork } from '../sim-network';
import type { WaDirectory } from './directory';
import type { SentMedia } from './media-messages';
import { backgroundOf } from './statuses';
import type { Baileys, DecodedMessage } from './wa-kit';

/** proto.Message.ProtocolMessage.Type */
const REVOKE = 0;
const MESSAGE_EDIT = 14;

export type SentContent =
  | SentMedia
  | { type: 'text'; text: string; forwarded: boolean; backgroundColor?: string | null }
  | { type: 'location'; location: LocationContent }
  | { type: 'contact'; contact: ContactContent }
  | { type: 'poll'; poll: { name: string; options: string[]; selectableCount: number }; secret: Buffer }
  | { type: 'reaction'; target: MessageKeyRef; emoji: string }
  | { type: 'pollVote'; pollWaMessageId: string; vote: { encPayload: Buffer; encIv: Buffer } }
  | { type: 'edit'; waMessageId: string; text: string }
  | { type: 'revoke'; waMessageId: string };

/**
 * Every type a device can send is read here (sentContentOf): a type added to OUTBOUND_MESSAGE_TYPES without a SentContent
 * does not compile (docs/messages.md, "adding a message type").
 */
export type SentContentCoversEveryType = CompilesWhen<OutboundMessageType extends SentContent['type'] ? true : false>;

/** What the network records of a message the device sent; null for kinds it does not carry. */
export function sentContentOf(message: DecodedMessage, chatJid: string): SentContent | null {
  // WhatsApp wraps an edit in `editedMessage`; Baileys sends the protocolMessage bare: both are read
  const protocol = (message.editedMessage?.message ?? message).protocolMessage;
  if (protocol?.key?.id) {
    if (protocol.type === REVOKE) return { type: 'revoke', waMessageId: protocol.key.id };
    const edited = protocol.editedMessage;
    const text = edited?.conversation || edited?.extendedTextMessage?.text;
    if (protocol.type === MESSAGE_EDIT && text) return { type: 'edit', waMessageId: protocol.key.id, text };
    return null;
  }
  const text = message.conversation || message.extendedTextMessage?.text;
  if (text) return { type: 'text', text, forwarded: Boolean(message.extendedTextMessage?.contextInfo?.isForwarded), backgroundColor: backgroundOf(message.extendedTextMessage?.backgroundArgb) };
  const place = message.locationMessage;
  if (place) {
    const location = { latitude: place.degreesLatitude ?? 0, longitude: place.degreesLongitude ?? 0, name: place.name || null, address: place.address || null };
    return { type: 'location', location };
  }
  // Baileys sends one card as contactMessage, several as contactsArrayMessage: the network keeps the first
  const card = message.contactMessage ?? message.contactsArrayMessage?.contacts?.[0];
  if (card) return { type: 'contact', contact: contactFromVcard(card.vcard, card.displayName) };
  const poll = message.pollCreationMessageV3 ?? message.pollCreationMessageV2 ?? message.pollCreationMessage;
  const secret = message.messageContextInfo?.messageSecret;
  if (poll?.name && poll.options && secret) {
    const options = poll.options.map((o) => o.optionName ?? '');
    return { type: 'poll', poll: { name: poll.name, options, selectableCount: poll.selectableOptionsCount || 1 }, secret: Buffer.from(secret) };
  }
  const reaction = message.reactionMessage;
  if (reaction?.key?.id && typeof reaction.text === 'string') {
    const target = { waMessageId: reaction.key.id, chatJid, fromMe: Boolean(reaction.key.fromMe), participant: reaction.key.participant ?? null };
    return { type: 'reaction', target, emoji: reaction.text };
  }
  const update = message.pollUpdateMessage;
  if (update?.pollCreationMessageKey?.id && update.vote?.encPayload && update.vote.encIv) {
    return { type: 'pollVote', pollWaMessageId: update.pollCreationMessageKey.id, vote: { encPayload: Buffer.from(update.vote.encPayload), encIv: Buffer.from(update.vote.encIv) } };
  }
  return null;
}

/** What a sent message says about other messages: the one it replies to, and whom it mentions. */
export interface SentContext {
  quotedWaMessageId: string | null;
  mentions: string[];
}

/**
 * The reply and mentions of a message the device sent: WhatsApp carries both in the contextInfo of its content
 * (extendedTextMessage, imageMessage, locationMessage…; never messageContextInfo): `stanzaId` names the quoted message,
 * `mentionedJid` the mentioned users.
 */
export function sentContextOf(message: DecodedMessage): SentContext {
  for (const [name, value] of Object.entries(message)) {
    if (name === 'messageContextInfo' || !value || typeof value !== 'object') continue;
    const info = (value as { contextInfo?: { stanzaId?: string | null; mentionedJid?: string[] | null } | null }).contextInfo;
    if (info) return { quotedWaMessageId: info.stanzaId || null, mentions: [...(info.mentionedJid ?? [])] };
  }
  return { quotedWaMessageId: null, mentions: [] };
}

/**
 * The option names a vote picked: opened with the poll's secret (Baileys' decryptPollVote, as the recipients' phones
 * run it), voter and creator being the account (its number's jid, or its lid), each SHA-256 matched to an option.
 * Null when no key opens it.
 */
export function openPollVote(
  baileys: Baileys,
  vote: { encPayload: Buffer; encIv: Buffer },
  poll: { waMessageId: string; secret: Buffer; options: string[] },
  accountJids: string[],
): string[] | null {
  for (const jid of accountJids) {
    try {
      const opened = baileys.decryptPollVote(vote, { pollCreatorJid: jid, pollMsgId: poll.waMessageId, pollEncKey: poll.secret, voterJid: jid });
      const byHash = new Map(poll.options.map((name) => [createHash('sha256').update(name).digest('hex'), name]));
      return opened.selectedOptions.map((hash) => byHash.get(Buffer.from(hash).toString('hex'))).filter((name): name is string => name !== undefined);
    } catch {
      // not sealed for this jid: try the next
    }
  }
  return null;
}

export interface DeviceMessageScope {
  baileys: Baileys;
  network: SimNetwork;
  directory: WaDirectory;
  sessionId: string;
  link: DeviceLink;
  /** the account's jid and lid */
  account: { jid: string; lid: string };
}

/**
 * Records what the device sent (`waMessageId` to `recipient`: the contact's jid, or the group) on the network. Edits
 * and deletes change the original (SimNetwork's `action` op, messages.edit / messages.revoke); the rest is a send.
 */
export function recordDeviceMessage(
  scope: DeviceMessageScope,
  waMessageId: string,
  recipient: string,
  content: SentContent,
  context: SentContext = { quotedWaMessageId: null, mentions: [] },
  statusAudience: string[] | null = null,
): void {
  const { network, sessionId, link } = scope;
  if (content.type === 'edit' || content.type === 'revoke') {
    const key = { waMessageId: content.waMessageId, chatJid: recipient, fromMe: true, participant: null };
    const action = content.type === 'edit' ? { action: 'messages.edit', args: { key, text: content.text } } : { action: 'messages.revoke', args: { key } };
    network.request(sessionId, link, 'action', action);
    return;
  }
  if (content.type === 'pollVote') {
    const poll = network.findSent(sessionId, content.pollWaMessageId)?.poll;
    const secret = scope.directory.polls.get(`${sessionId} ${content.pollWaMessageId}`)?.secret;
    if (!poll || !secret) throw new Error(`a vote on a poll the front door did not see sent: ${content.pollWaMessageId}`);
    const options = openPollVote(scope.baileys, content.vote, { waMessageId: content.pollWaMessageId, secret, options: poll.options }, [scope.account.jid, scope.account.lid]);
    if (!options) throw new Error('a vote the poll\'s secret does not open');
    const vote = { type: 'pollVote', poll: { waMessageId: content.pollWaMessageId }, options };
    network.request(sessionId, link, 'send', { waMessageId, to: recipient, content: vote, quoted: null, mentions: [] } as never);
    return;
  }
  // a poll's secret stays with the front door: its members' phones seal their votes with it
  if (content.type === 'poll') scope.directory.polls.set(`${sessionId} ${waMessageId}`, { secret: content.secret });
  // the poll's secret, the forward's flag and a status's background are the front door's; the rest is what the
  // network's `send` takes (a status post with the audience that read it and its background: the network's statusPosted)
  const { secret: _secret, forwarded: _forwarded, backgroundColor, ...sent } = content as Record<string, unknown>;
  const statusPost = statusAudience ? { statusPost: { audience: statusAudience, backgroundColor: backgroundColor ?? null } } : {};
  // the network's `send` names the quoted message by its id (the sim door's `quoted.waMessageId`)
  const quoted = context.quotedWaMessageId ? { waMessageId: context.quotedWaMessageId } : null;
  network.request(sessionId, link, 'send', { waMessageId, to: recipient, content: sent, quoted, mentions: context.mentions, ...statusPost } as never);
  // the forwarded copy of a text: WhatsApp Web names no original, so the entry is marked as the copy it is
  const recorded = content.type === 'text' && content.forwarded ? network.findSent(sessionId, waMessageId) : undefined;
  if (recorded) recorded.forwarded = true;
}
