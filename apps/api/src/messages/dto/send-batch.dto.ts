import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches, ValidateIf } from 'class-validator';
import { ErrorDetail } from '../../common/api-docs';
import { MessageResponse } from './message.dto';
import { IDEMPOTENCY_KEY, SendMessageDto } from './send-message.dto';

/** Messages a bulk send takes at once. */
export const BATCH_MAX = 100;

/** One message of a bulk send: a send's body (CONTRACT 10) with its own optional idempotency key. */
export class SendBatchItemDto extends SendMessageDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x20-\\x7e]{1,255}$',
    description: "this message's Idempotency-Key: a repeat (in this batch or any send of the session) within 24 h returns the first message and counts and sends nothing",
  })
  @ValidateIf((o: SendBatchItemDto) => o.idempotencyKey !== undefined)
  @IsString()
  @Matches(IDEMPOTENCY_KEY, { message: 'idempotencyKey must be 1..255 printable ASCII characters' })
  idempotencyKey?: string;
}

/**
 * The body of `POST …/messages:batch`. Only for the document: the service checks the envelope itself and validates
 * each message on its own (one bad message is that item's 422, never the batch's).
 */
export class SendBatchDto {
  @ApiProperty({ type: [SendBatchItemDto], minItems: 1, maxItems: BATCH_MAX, description: `1..${BATCH_MAX} messages, accepted in this order` })
  messages: SendBatchItemDto[];
}

/** One message's outcome, at its position in the batch. */
export class SendBatchResult {
  @ApiProperty({
    type: 'integer',
    enum: [202, 404, 413, 422, 429],
    description: "what a send of this message alone would have answered: 202 (`message` set) or the item's error (`error` set)",
  })
  status: number;

  @ApiProperty({ type: MessageResponse, nullable: true, description: 'the queued Message (or, for a repeated idempotency key, the first one)' })
  message: MessageResponse | null;

  @ApiProperty({ type: ErrorDetail, nullable: true, description: 'the error envelope\'s `error` for this message (`rate_limited` carries `retryAfterSeconds`)' })
  error: ErrorDetail | null;
}

export class SendBatchResponse {
  @ApiProperty({ type: [SendBatchResult], description: 'one result per message, in the order sent' })
  results: SendBatchResult[];
}
