/**
 * What the simulated network keeps of messages: what each device sent (once per session and waMessageId: a re-send
 * is acknowledged, never stored or delivered again; `GET /sim/messages`), what it was delivered (what a contact may
 * react to, edit or revoke, what a forward copies), and the media bytes both carry (`GET /sim/media/{mediaId}`).
 */
import { DomainError, SimAccount, SimDeviceOps, SimInboundMessage, SimMedia, SimSentMessage } from '@app/contracts';
import { createHash, randomBytes } from 'node:crypto';
import { MediaInput, SendInput, validation } from './sim-input';

/** Media bytes the network holds, served at `GET /sim/media/{mediaId}`. */
export interface StoredMedia {
  data: Buffer;
  mimetype: string;
  filename: string | null;
}

/** The kinds a forward may copy. */
const FORWARDABLE = ['text', 'image', 'video', 'audio', 'voice', 'document', 'sticker', 'location', 'contact'];

export class SimMessageLog {
  private readonly sent: SimSentMessage[] = [];
  /** `${sessionId} ${waMessageId}`: WhatsApp stores a message once per sender and id */
  private readonly sentByKey = new Map<string, SimSentMessage>();
  /** the messages delivered to each device, `${sessionId} ${waMessageId}`: what a forward copies, a contact edits or reacts to */
  private readonly delivered = new Map<string, SimInboundMessage>();
  private readonly media = new Map<string, StoredMedia>();

  /** Stores a device's message once per waMessageId; `stored` is the new message (null for a re-send). */
  record(sessionId: string, account: SimAccount, input: SendInput): { result: SimDeviceOps['send']['result']; stored: SimSentMessage | null } {
    const key = messageKey(sessionId, input.waMessageId);
    const known = this.sentByKey.get(key);
    if (known) {
      known.sends += 1;
      return { result: { waMessageId: known.id, timestamp: known.timestamp, duplicate: true }, stored: null };
    }
    if (input.pollVote) this.checkPollVote(sessionId, input.pollVote);
    const message: SimSentMessage = {
      id: input.waMessageId,
      sessionId,
      from: account.jid,
      to: input.to,
      type: input.type === 'forward' ? 'text' : input.type,
      text: input.text,
      media: input.media ? this.keepMedia(input.media) : null,
      location: input.location,
      contact: input.contact,
      poll: input.poll,
      reaction: input.reaction,
      quotedWaMessageId: input.quotedWaMessageId,
      mentions: input.mentions,
      timestamp: Date.now(),
      sends: 1,
      edits: [],
      revoked: null,
      forwarded: false,
      ptt: input.ptt,
      pollVote: input.pollVote,
      linkPreview: input.linkPreview,
      ...(input.status ? { status: input.status } : {}),
    };
    if (input.forwardOf) Object.assign(message, this.forwardedContent(sessionId, input.forwardOf));
    this.sent.push(message);
    this.sentByKey.set(key, message);
    return { result: { waMessageId: message.id, timestamp: message.timestamp, duplicate: false }, stored: message };
  }

  /** A message delivered to the device (what it may react to, forward, and its sender edit or revoke). */
  noteDelivered(sessionId: string, message: SimInboundMessage): void {
    this.delivered.set(messageKey(sessionId, message.id), message);
  }

  /** A message the device sent, or undefined. */
  findSent(sessionId: string, waMessageId: unknown): SimSentMessage | undefined {
    return typeof waMessageId === 'string' ? this.sentByKey.get(messageKey(sessionId, waMessageId)) : undefined;
  }

  /** A message the device sent; 404 naming `field` otherwise. */
  sentMessage(sessionId: string, waMessageId: string, field: string): SimSentMessage {
    const sent = this.sentByKey.get(messageKey(sessionId, waMessageId));
    if (!sent) throw new DomainError('not_found', 'the device did not send this message', { [field]: waMessageId });
    return sent;
  }

  /** The chat of a message the device sent or received, or undefined. */
  chatOf(sessionId: string, waMessageId: string): string | undefined {
    const key = messageKey(sessionId, waMessageId);
    return this.sentByKey.get(key)?.to ?? this.delivered.get(key)?.chatJid;
  }

  /** A message `from` sent the device; 404 otherwise. */
  contactMessage(sessionId: string, from: string, waMessageId: string): SimInboundMessage {
    const message = this.delivered.get(messageKey(sessionId, waMessageId));
    if (!message || message.from !== from) throw new DomainError('not_found', 'this contact did not send the device this message', { waMessageId, from });
    return message;
  }

  list(sessionId?: string): SimSentMessage[] {
    return sessionId ? this.sent.filter((m) => m.sessionId === sessionId) : [...this.sent];
  }

  keepMedia(input: MediaInput): SimMedia {
    const mediaId = randomBytes(12).toString('hex');
    this.media.set(mediaId, { data: input.data, mimetype: input.mimetype, filename: input.filename });
    return {
      mediaId,
      mimetype: input.mimetype,
      size: input.data.length,
      filename: input.filename,
      caption: input.caption,
      sha256: createHash('sha256').update(input.data).digest('hex'),
    };
  }

  mediaBytes(mediaId: string): StoredMedia {
    const media = this.media.get(mediaId);
    if (!media) throw new DomainError('not_found', 'the network has no media with this id', { mediaId });
    return media;
  }

  /** What a forward copies: the content of a message the device sent or received, marked forwarded. */
  private forwardedContent(sessionId: string, waMessageId: string): Partial<SimSentMessage> {
    const key = messageKey(sessionId, waMessageId);
    const original: SimSentMessage | SimInboundMessage | undefined = this.sentByKey.get(key) ?? this.delivered.get(key);
    if (!original) throw new DomainError('not_found', 'the device neither sent nor received the message it forwards', { waMessageId });
    if (!FORWARDABLE.includes(original.type)) {
      throw validation('content.original.waMessageId', `a ${original.type} message cannot be forwarded`);
    }
    return {
      type: original.type as SimSentMessage['type'],
      text: original.text,
      media: original.media,
      location: original.location,
      contact: original.contact,
      ptt: 'ptt' in original ? original.ptt : false,
      forwarded: true,
    };
  }

  /** A device votes on a poll it sent (contacts cannot send polls on this network yet), with that poll's options. */
  private checkPollVote(sessionId: string, vote: { pollWaMessageId: string; options: string[] }): void {
    const poll = this.sentByKey.get(messageKey(sessionId, vote.pollWaMessageId))?.poll;
    if (!poll) throw new DomainError('not_found', 'the device did not send this poll', { pollWaMessageId: vote.pollWaMessageId });
    const unknown = vote.options.filter((o) => !poll.options.includes(o));
    if (unknown.length > 0) throw new DomainError('validation_error', 'options are not options of this poll', { options: unknown });
    if (vote.options.length > poll.selectableCount) throw validation('content.options', `must pick at most ${poll.selectableCount}`);
  }
}

function messageKey(sessionId: string, waMessageId: string): string {
  return `${sessionId} ${waMessageId}`;
}
