import type { InboundMessage } from '../engine/engine.interface';
import type { NewMessage } from './message-store';

/** Where and when a message from the network is stored: the ids of its session, its row id and its times. */
export interface InboundPlacement {
  organizationId: string;
  sessionId: string;
  id: string;
  createdAt: number;
  sentAt: number | null;
}

/**
 * The log row of a message the network delivered, live or from a history sync: one mapping, so both paths store the
 * same fields. A message the account sent from its phone (`fromMe`) is `out`/`sent`; any other `in`/`received`.
 */
export function inboundMessageRow(m: InboundMessage, at: InboundPlacement): NewMessage {
  const media = m.media ? { mimetype: m.media.mimetype, size: m.media.size, filename: m.media.filename, caption: m.media.caption } : null;
  return {
    id: at.id,
    organizationId: at.organizationId,
    sessionId: at.sessionId,
    waMessageId: m.id,
    direction: m.fromMe ? 'out' : 'in',
    chatJid: m.chatJid,
    from: m.from,
    type: m.type ?? 'text',
    text: m.text,
    media,
    mediaRef: m.media?.ref ?? null,
    location: m.location ?? null,
    contact: m.contact ?? null,
    poll: m.poll ?? null,
    quotedWaMessageId: m.quotedWaMessageId ?? null,
    mentions: m.mentions ?? [],
    status: m.fromMe ? 'sent' : 'received',
    raw: m.raw ?? null,
    createdAt: at.createdAt,
    sentAt: at.sentAt,
  };
}
