import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { DestinationFieldsDto, present, RetryPolicyView } from '../../destinations/dto/destination-fields.dto';
import { IsHeaderMap, IsWebhookUrl } from './webhook-validators';

/** A webhook's own fields beside every destination's; `secret: null` clears the secret. */
class WebhookFieldsDto extends DestinationFieldsDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 'X-Tenant': 'acme' } })
  @ValidateIf(present) @IsHeaderMap()
  customHeaders?: Record<string, string>;

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
