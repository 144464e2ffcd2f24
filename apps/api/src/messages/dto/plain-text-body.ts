import { normalizeChatJid } from '@app/contracts';
import { SendBatchItemDto } from './send-batch.dto';
import { IDEMPOTENCY_KEY, SendMessageDto, TEXT_MAX } from './send-message.dto';

/**
 * The common body, a text (`to` and `text`, with at most `type: "text"` and `linkPreview`; `idempotencyKey` too for
 * a bulk item), checked without class-transformer and class-validator, which are the dearest step of a send's API
 * CPU for this shape (docs/benchmarks/messages.md): the instance the
 * global pipe makes of it, or null for any other body, which the pipe then checks (and words the errors of). Only
 * bodies the pipe accepts are taken here, and made as it makes them (`to` normalized, the class's other fields
 * undefined); the spec holds both to the same answer on every shape.
 */
export function plainTextBody(raw: unknown): SendMessageDto | null {
  return plainText(raw, new SendMessageDto(), false);
}

/** `plainTextBody` for one message of a bulk send. */
export function plainTextItem(raw: unknown): SendBatchItemDto | null {
  return plainText(raw, new SendBatchItemDto(), true);
}

function plainText<T extends SendMessageDto & { idempotencyKey?: string }>(raw: unknown, dto: T, keyed: boolean): T | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const body = raw as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (key === 'to' || key === 'text') continue;
    if (key === 'type' ? value !== 'text' : key === 'linkPreview' ? typeof value !== 'boolean' : !keyed || key !== 'idempotencyKey' || !isKey(value)) {
      return null;
    }
  }
  const { to, text } = body;
  if (typeof to !== 'string' || typeof text !== 'string' || text.length < 1 || text.length > TEXT_MAX) return null;
  const jid = normalizeChatJid(to);
  if (jid === null) return null;
  // the instance has every field of the class already (undefined), in the class's order: only the body's are set
  dto.to = jid;
  dto.text = text;
  if ('type' in body) dto.type = 'text';
  if ('linkPreview' in body) dto.linkPreview = body.linkPreview as boolean;
  if ('idempotencyKey' in body) dto.idempotencyKey = body.idempotencyKey as string;
  return dto;
}

const isKey = (value: unknown) => typeof value === 'string' && IDEMPOTENCY_KEY.test(value);
