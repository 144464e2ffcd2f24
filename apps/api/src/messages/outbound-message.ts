import { isCaptionedMediaType, MessageSendOptions, OutboundMessageType } from '@app/contracts';
import type { MessageRow, NewMessage, Session } from '@app/database';
import type { SendMessageDto } from './dto/send-message.dto';
import { newWaMessageId } from './wa-message-id';

/** The messages a send names, found in this session. */
export interface SendTargets {
  quoted: MessageRow | null;
  reacted: MessageRow | null;
  polled: MessageRow | null;
}
export const NO_TARGETS: SendTargets = { quoted: null, reacted: null, polled: null };

/** The row of an accepted send; `chatJid` overrides `to` (a status post goes to status@broadcast). */
export function outboundMessage(
  session: Pick<Session, 'id' | 'organizationId' | 'waJid'>,
  id: string,
  body: SendMessageDto,
  { quoted, reacted }: SendTargets,
  bytes: Buffer | null,
  idempotencyKey: string | null,
  extra: { chatJid?: string; sendOptions: MessageSendOptions | null; sendAt?: number },
): NewMessage {
  const type: OutboundMessageType = body.type ?? 'text';
  return {
    id,
    organizationId: session.organizationId,
    sessionId: session.id,
    waMessageId: newWaMessageId(),
    direction: 'out',
    chatJid: extra.chatJid ?? body.to,
    from: session.waJid,
    type,
    text: type === 'text' ? body.text! : null,
    media: body.media && bytes
      ? { mimetype: body.media.mimetype, size: bytes.length, filename: body.media.filename ?? null, caption: isCaptionedMediaType(type) ? (body.text ?? null) : null }
      : null,
    location: body.location
      ? { latitude: body.location.latitude, longitude: body.location.longitude, name: body.location.name ?? null, address: body.location.address ?? null }
      : null,
    contact: body.contact ? { fullName: body.contact.fullName, phoneNumber: body.contact.phoneNumber } : null,
    poll: body.poll ? { name: body.poll.name, options: body.poll.options, selectableCount: body.poll.selectableCount ?? 1 } : null,
    reaction: reacted ? { waMessageId: reacted.waMessageId, emoji: body.reaction!.emoji } : null,
    quotedMessageId: quoted?.id ?? null,
    quotedWaMessageId: quoted?.waMessageId ?? null,
    mentions: body.mentions ?? [],
    status: extra.sendAt ? 'scheduled' : 'queued',
    sendAt: extra.sendAt ?? null,
    idempotencyKey,
    sendOptions: extra.sendOptions,
  };
}
