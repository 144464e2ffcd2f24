import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import { RATE_LIMIT_BOUNDS, RETRY_BOUNDS, RETRY_POLICIES, RetryPolicy, RetryPolicyKind } from '@app/contracts';
import { IsWebhookEvents, WEBHOOK_EVENT_NAMES } from './destination-validators';

/** null and undefined are different on PATCH: undefined keeps a field, null is refused unless the field is nullable. */
export const present = (_: object, v: unknown) => v !== undefined;

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

/** The settings every destination takes on create and update (a webhook, an event sink); `sessionId: null` removes the scope. */
export class DestinationFieldsDto {
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

  @ApiPropertyOptional({ type: RetryPolicyDto })
  @ValidateIf(present) @IsObject() @ValidateNested() @Type(() => RetryPolicyDto)
  retryPolicy?: RetryPolicyDto;

  @ApiPropertyOptional({
    type: 'integer', nullable: true, minimum: RATE_LIMIT_BOUNDS.min, maximum: RATE_LIMIT_BOUNDS.max,
    description: 'at most this many deliveries per second (POSTs to a webhook, publishes to a broker; per dispatcher replica); null: no cap',
  })
  @IsOptional() @IsInt() @Min(RATE_LIMIT_BOUNDS.min) @Max(RATE_LIMIT_BOUNDS.max)
  rateLimitPerSecond?: number | null;
}

export class RetryPolicyView implements RetryPolicy {
  @ApiProperty({ enum: RETRY_POLICIES }) policy: RetryPolicyKind;
  @ApiProperty({ type: 'integer' }) delaySeconds: number;
  @ApiProperty({ type: 'integer' }) attempts: number;
}

