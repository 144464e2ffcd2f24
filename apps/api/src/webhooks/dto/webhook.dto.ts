import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { RATE_LIMIT_BOUNDS, RETRY_BOUNDS, RETRY_POLICIES, RetryPolicy, RetryPolicyKind } from '@app/contracts';
import { IsHeaderMap, IsWebhookEvents, IsWebhookUrl, WEBHOOK_EVENT_NAMES } from './webhook-validators';

/** null and undefined are different on PATCH: undefined keeps a field, null is refused unless the field is nullable. */
const present = (_: object, v: unknown) => v !== undefined;

export class RetryPolicyDto {
  @ApiPropertyOptional({ enum: RETRY_POLICIES, description: 'on create, default `exponential`; on PATCH an omitted field keeps its value' })
  @ValidateIf(present) @IsIn(RETRY_POLICIES)
  policy?: RetryPolicyKind;

  @ApiPropertyOptional({ type: 'integer', minimum: RETRY_BOUNDS.delaySeconds.min, maximum: RETRY_BOUNDS.delaySeconds.max, description: 'on create, default 2' })
  @ValidateIf(present) @IsInt() @Min(RETRY_BOUNDS.delaySeconds.min) @Max(RETRY_BOUNDS.delaySeconds.max)
  delaySeconds?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: RETRY_BOUNDS.attempts.min, maximum: RETRY_BOUNDS.attempts.max, description: 'on create, default 15' })
  @ValidateIf(present) @IsInt() @Min(RETRY_BOUNDS.attempts.min) @Max(RETRY_BOUNDS.attempts.max)
  attempts?: number;
}

/** Fields shared by create and update; `secret: null` clears the secret, `sessionId: null` removes the scope. */
class WebhookFieldsDto {
  @ApiPropertyOptional({
    type: [String],
    maxItems: 100,
    items: { type: 'string', enum: [...WEBHOOK_EVENT_NAMES] },
    example: ['message.received', 'session.status'],
    description: '`*` (every event) or names from the catalog (docs/events.md); `[]` none. On create, default `["*"]`',
  })
  @ValidateIf(present) @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) @IsNotEmpty({ each: true }) @MaxLength(100, { each: true }) @IsWebhookEvents()
  events?: string[];

  @ApiPropertyOptional({ type: String, nullable: true, description: 'scope deliveries to one session of the organization' })
  @IsOptional() @IsString() @MaxLength(64)
  sessionId?: string | null;

  @ApiPropertyOptional({ description: 'on create, default true' })
  @ValidateIf(present) @IsBoolean()
  active?: boolean;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 'X-Tenant': 'acme' } })
  @ValidateIf(present) @IsHeaderMap()
  customHeaders?: Record<string, string>;

  @ApiPropertyOptional({ type: RetryPolicyDto })
  @ValidateIf(present) @IsObject() @ValidateNested() @Type(() => RetryPolicyDto)
  retryPolicy?: RetryPolicyDto;

  @ApiPropertyOptional({
    type: 'integer', nullable: true, minimum: RATE_LIMIT_BOUNDS.min, maximum: RATE_LIMIT_BOUNDS.max,
    description: 'at most this many POSTs per second to the receiver (per dispatcher replica); null: no cap',
  })
  @IsOptional() @IsInt() @Min(RATE_LIMIT_BOUNDS.min) @Max(RATE_LIMIT_BOUNDS.max)
  rateLimitPerSecond?: number | null;

  @ApiPropertyOptional({ type: String, nullable: true, writeOnly: true, description: 'HMAC key; never returned' })
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(1024)
  secret?: string | null;
}

export class CreateWebhookDto extends WebhookFieldsDto {
  @ApiProperty({ example: 'https://example.com/hooks/whatsapp', maxLength: 2048 })
  @IsWebhookUrl()
  url: string;
}

/** Every field optional; an omitted field keeps its value. */
export class UpdateWebhookDto extends WebhookFieldsDto {
  @ApiPropertyOptional({ example: 'https://example.com/hooks/whatsapp', maxLength: 2048 })
  @ValidateIf(present) @IsWebhookUrl()
  url?: string;
}

export class RetryPolicyView implements RetryPolicy {
  @ApiProperty({ enum: RETRY_POLICIES }) policy: RetryPolicyKind;
  @ApiProperty({ type: 'integer' }) delaySeconds: number;
  @ApiProperty({ type: 'integer' }) attempts: number;
}

export class WebhookResponse {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: [String] }) events: string[];
  @ApiProperty({ type: String, nullable: true }) sessionId: string | null;
  @ApiProperty() active: boolean;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) customHeaders: Record<string, string>;
  @ApiProperty({ type: RetryPolicyView }) retryPolicy: RetryPolicyView;
  @ApiProperty({ type: 'integer', nullable: true, description: 'POSTs per second cap; null: none' }) rateLimitPerSecond: number | null;
  @ApiProperty({
    type: 'integer', format: 'int64', nullable: true,
    description: 'epoch ms when the dispatchers disabled the webhook after it kept failing; cleared by PATCH active: true',
  })
  disabledAt: number | null;
  @ApiProperty({ type: String, nullable: true }) disabledReason: string | null;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) updatedAt: number;
}

export class WebhookPage {
  @ApiProperty({ type: [WebhookResponse] }) data: WebhookResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
