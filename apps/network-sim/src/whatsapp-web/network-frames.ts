/**
 * What SimNetwork tells a WhatsApp Web device, as WhatsApp Web says it: one entry per frame type of the network's
 * device protocol (SimNetworkFrame), which the compiler holds complete, so a new frame type fails to compile until
 * this door says what it becomes. The pairing frames start the companion's steps (companion-pairing.ts); a network
 * event becomes stanzas that stay pending on the network until the device acknowledges them (the ack ledger). An event
 * this door does not carry yet is logged and stays pending; a frame of a type not in the table is logged as unknown.
 */
import { STATUS_BROADCAST_JID, SimHistoryChat, SimNetworkFrame } from '@app/contracts';
import { phoneAppStateChange } from './app-state-door';
import { receiptKey } from './ack-ledger';
import { sendFromContact } from './contact-delivery';
import { callOffer, contactContentOf, contactEdit, contactRevoke, contextInfoOf, newStanzaId, presenceStanza, QuotedMessage, sealPollVote, stanzaTypeOf, verifiedNameNode } from './contact-messages';
import { groupNotifications, isGroupJid } from './groups';
import { historyNotification, historySyncOf } from './history-sync';
import { inboundMediaMessage, isInboundMedia } from './media-messages';
import { mediaHostOf } from './media-server';
import { statusMessage } from './statuses';
import type { WaSocket } from './wa-socket';
import { nowSeconds } from './wa-kit';

type FrameType = SimNetworkFrame['type'];
type FrameOf<T extends FrameType> = Extract<SimNetworkFrame, { type: T }>;
/** The history batches played to one socket so far, and the chats the first one named (history-sync.ts). */
export interface HistoryPlayed {
  chunks: number;
  readonly chats: Map<string, SimHistoryChat>;
}
/** Where a frame is played: the socket, and what this door keeps across frames. */
export interface FrameDoor {
  socket: WaSocket;
  history: HistoryPlayed;
}
type FramePlay<T extends FrameType> = (door: FrameDoor, frame: FrameOf<T>) => void;

const seconds = (ms: number) => Math.floor(ms / 1000);

/** An event this door does not carry yet: logged; it stays pending on the network. */
function notCarried({ socket }: FrameDoor, frame: SimNetworkFrame): void {
  socket.deps.logger?.debug({ sessionId: socket.sessionId, type: frame.type }, 'network event not carried by the whatsapp web front door yet');
}

export const FRAME_STANZAS: { [T in FrameType]: FramePlay<T> } = {
  qr: ({ socket }) => socket.pairing.showRefs(),
  paired: ({ socket }, frame) => void socket.pairing.completePairing(frame.credential).catch((err) => socket.fail(err)),
  open: ({ socket }) => socket.loggedIn(),
  message: deliverMessage,
  receipt: deliverReceipt,
  'group-participants': deliverGroupChange,
  'group-update': deliverGroupChange,
  reaction: deliverReaction,
  'poll-vote': deliverPollVote,
  presence: deliverPresence,
  call: deliverCall,
  edit: deliverContactChange,
  revoke: deliverContactChange,
  'chat-update': ({ socket }, frame) => phoneAppStateChange(socket, frame.eventId, frame.chats.map((chat) => ({ chat }))),
  label: ({ socket }, frame) => phoneAppStateChange(socket, frame.eventId, [{ label: frame.change }]),
  status: deliverStatus,
  history: deliverHistory,
  contact: notCarried,
  'channel-message': notCarried,
  // the answer to the sim door's requests; this door answers IQs instead
  response: notCarried,
};

/** Plays one frame; one of a type this door does not know is logged (it stays pending on the network). */
export function playFrame(door: FrameDoor, frame: SimNetworkFrame): void {
  const play = (FRAME_STANZAS as Record<string, ((door: FrameDoor, frame: SimNetworkFrame) => void) | undefined>)[frame.type];
  if (play) return play(door, frame);
  door.socket.deps.logger?.warn({ sessionId: door.socket.sessionId, type: frame.type }, 'network frame of a type the whatsapp web front door does not know');
}

/**
 * A contact's message (text, location, card or media, 1:1 or in a group), Signal-encrypted by the contact for this
 * device. Kinds not carried yet stay pending and are logged.
 */
function deliverMessage({ socket }: FrameDoor, { eventId, message }: FrameOf<'message'>): void {
  const media = isInboundMedia(message);
  const quoted = quotedBy(socket, message);
  const content = media ? null : contactContentOf(message, quoted);
  if ((!media && !content) || !message.from.endsWith('@s.whatsapp.net')) {
    socket.deps.logger?.debug({ sessionId: socket.sessionId, type: message.type, chatJid: message.chatJid }, 'inbound kind not carried by the whatsapp web front door yet');
    return;
  }
  const envelope = { id: message.id, from: message.from, chatJid: message.chatJid, type: content ? stanzaTypeOf(content) : 'media', t: seconds(message.timestamp) };
  // WhatsApp names the sender by its push name in the stanza's `notify` (Baileys' `pushName`)
  const notify: Record<string, string> = message.pushName ? { notify: message.pushName } : {};
  // and a business by its verified name: a `verified_name` node holding its certificate (Baileys' `verifiedBizName`)
  const verified = message.verifiedName ? [verifiedNameNode(socket.deps.baileys, message.verifiedName)] : [];
  if (content) return sendFromContact(socket, eventId, envelope, content, notify, verified);
  // the contact's phone uploads the file (encrypted) to the media host, then sends the message naming it
  const { baileys, network } = socket.deps;
  const host = mediaHostOf(network);
  if (!host) {
    socket.deps.logger?.warn({ sessionId: socket.sessionId }, 'the media host is not up: the media message waits');
    return;
  }
  const contextInfo = contextInfoOf(quoted, message.mentions);
  sendFromContact(socket, eventId, envelope, () => inboundMediaMessage(baileys, host, message, network.mediaBytes(message.media!.mediaId).data, contextInfo), notify, verified);
}

/**
 * The message a contact's message replies to, as its phone names it: one the device sent (its author the account,
 * its text copied), or else one of the contact's own (the network keeps no copy of those to quote).
 */
function quotedBy(socket: WaSocket, message: FrameOf<'message'>['message']): QuotedMessage | null {
  if (!message.quotedWaMessageId) return null;
  const sent = socket.deps.network.findSent(socket.sessionId, message.quotedWaMessageId);
  if (sent) return { waMessageId: sent.id, author: sent.from, text: sent.text };
  return { waMessageId: message.quotedWaMessageId, author: message.from, text: null };
}

/**
 * A batch of the history the phone sends a newly linked device (history-sync.ts), sent by the phone itself (the
 * account's device 0, `category="peer"`) once the device is logged in; before that (the pairing socket) it waits on
 * the network, which hands it over again on login. The device's receipt takes it, and the network sends the next.
 */
function deliverHistory({ socket, history }: FrameDoor, frame: FrameOf<'history'>): void {
  const account = socket.openDevice()?.account;
  if (!account) return;
  if (history.chunks === 0) for (const chat of frame.chats) history.chats.set(chat.jid, chat);
  const sync = historySyncOf(socket.deps.baileys, frame, history.chats, history.chunks++);
  const envelope = { id: newStanzaId(), from: account.jid, chatJid: account.jid, type: 'text', t: seconds(Date.now()) };
  sendFromContact(socket, frame.eventId, envelope, historyNotification(socket.deps.baileys, sync), { category: 'peer' });
}

/**
 * A contact reacts (`""`: removes its reaction): a `reactionMessage` whose key names the message as the contact's
 * phone sees it (fromMe: its own; otherwise the author), which Baileys turns to its own perspective.
 */
function deliverReaction({ socket }: FrameDoor, event: FrameOf<'reaction'>): void {
  const account = socket.registration!.credential!.account;
  const sentByDevice = socket.deps.network.listMessages(socket.sessionId).some((m) => m.id === event.waMessageId);
  const group = isGroupJid(event.chatJid);
  const key = { id: event.waMessageId, remoteJid: group ? event.chatJid : account.jid, fromMe: !sentByDevice, ...(group && sentByDevice ? { participant: account.jid } : {}) };
  const envelope = { id: newStanzaId(), from: event.from, chatJid: event.chatJid, type: 'reaction', t: seconds(Date.now()) };
  sendFromContact(socket, event.eventId, envelope, { reactionMessage: { key, text: event.emoji, senderTimestampMs: Date.now() } });
}

/** A contact votes: a `pollUpdateMessage` sealed with the poll's secret, as a phone seals it (contact-messages.ts). */
function deliverPollVote({ socket }: FrameDoor, event: FrameOf<'poll-vote'>): void {
  const account = socket.registration!.credential!.account;
  const poll = socket.deps.directory.polls.get(`${socket.sessionId} ${event.pollWaMessageId}`);
  if (!poll) {
    socket.deps.logger?.warn({ sessionId: socket.sessionId, poll: event.pollWaMessageId }, 'a vote on a poll the front door did not see sent: the vote waits');
    return;
  }
  const group = isGroupJid(event.chatJid);
  const vote = sealPollVote(socket.deps.baileys, { secret: poll.secret, pollId: event.pollWaMessageId, creatorJid: account.jid, voterJid: event.voter, options: event.selectedOptions });
  const key = { id: event.pollWaMessageId, remoteJid: group ? event.chatJid : account.jid, fromMe: false, ...(group ? { participant: account.jid } : {}) };
  const envelope = { id: newStanzaId(), from: event.voter, chatJid: event.chatJid, type: 'poll', t: seconds(Date.now()) };
  sendFromContact(socket, event.eventId, envelope, { pollUpdateMessage: { pollCreationMessageKey: key, vote, senderTimestampMs: Date.now() } });
}

/**
 * A contact's presence: `<presence from type>` (available / unavailable) or `<chatstate from [participant]>`
 * (composing, recording, paused). Neither is acknowledged by the client, so the network forgets it once sent.
 */
function deliverPresence({ socket }: FrameDoor, event: FrameOf<'presence'>): void {
  socket.outbound.queue('sending a presence failed', () => {
    socket.send(presenceStanza(event));
    socket.deps.network.ack(socket.sessionId, socket.link, event.eventId);
  });
}

/**
 * A contact edits or deletes for everyone a message it sent the device: a protocolMessage (MESSAGE_EDIT inside
 * `editedMessage`, REVOKE) from the contact, naming the message from its phone's side (contact-messages.ts).
 */
function deliverContactChange({ socket }: FrameDoor, event: FrameOf<'edit' | 'revoke'>): void {
  const accountJid = socket.registration!.credential!.account.jid;
  const from = event.type === 'edit' ? event.from : event.by;
  const envelope = { id: newStanzaId(), from, chatJid: event.chatJid, type: 'text', t: seconds(Date.now()) };
  sendFromContact(socket, event.eventId, envelope, event.type === 'edit' ? contactEdit(event, accountJid) : contactRevoke(event, accountJid));
}

/**
 * A contact posted a status the account may see: `<message from="status@broadcast" participant=<contact>>`, sealed
 * with the contact's sender key for status@broadcast (statuses.ts). Kinds without media only, as 1:1 texts.
 */
function deliverStatus({ socket }: FrameDoor, { eventId, status }: FrameOf<'status'>): void {
  const content = statusMessage(status);
  if (!content) {
    socket.deps.logger?.debug({ sessionId: socket.sessionId, type: status.type }, 'status kind not carried by the whatsapp web front door yet');
    return;
  }
  const envelope = { id: status.id, from: status.from, chatJid: STATUS_BROADCAST_JID, type: 'text', t: seconds(status.timestamp) };
  sendFromContact(socket, eventId, envelope, content);
}

/** A contact calls: `<call from><offer call-id call-creator>`; the device's `<ack class="call">` takes it. */
function deliverCall({ socket }: FrameDoor, event: FrameOf<'call'>): void {
  socket.outbound.queue('sending a call offer failed', (stamp) => {
    const stanza = callOffer(socket.newId(), event);
    socket.ledger.expect(event.eventId, [['call', stanza.attrs.id]]);
    socket.send({ ...stanza, attrs: { ...stanza.attrs, ...stamp() } });
  });
}

/**
 * A group changed on the network (the control API, or a member's IQ): `<notification type="w:gp2">`, one per change.
 * The network forgets the event once the device acked every one of them.
 */
function deliverGroupChange({ socket }: FrameDoor, event: FrameOf<'group-participants' | 'group-update'>): void {
  socket.outbound.queue('sending a group notification failed', (stamp) => {
    // the member who made the change; the control API's admin is named by no one (no author, as on the sim door)
    const notifications = groupNotifications(() => socket.newId(), event, event.actor ?? null, socket.lidOf);
    socket.ledger.expect(event.eventId, notifications.map((n) => ['notification', n.attrs.id]));
    for (const notification of notifications) socket.send({ ...notification, attrs: { ...notification.attrs, ...stamp() } });
  });
}

/**
 * A contact's phone reports a message the device sent as delivered (no type), read or played: `<receipt from=<contact>
 * id=<waMessageId>>`, with no `recipient`, which Baileys reads as a receipt for its own message (`messages.update`).
 * It stays pending on the network until the device's `<ack class="receipt">`.
 */
function deliverReceipt({ socket }: FrameDoor, { eventId, waMessageId, chatJid, status, participant }: FrameOf<'receipt'>): void {
  const type = status === 'delivered' ? undefined : status;
  socket.outbound.queue('sending a receipt failed', (stamp) => {
    socket.ledger.expect(eventId, [['receipt', receiptKey(waMessageId, type, participant)]]);
    const member: Record<string, string> = participant ? { participant } : {};
    socket.send({ tag: 'receipt', attrs: { from: chatJid, ...member, id: waMessageId, t: nowSeconds(), ...(type ? { type } : {}), ...stamp() } });
  });
}
