import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { MAX_URL_LENGTH } from '../../../destinations/dto/destination-validators';

/** `PUT /sessions/{id}/integrations/chatwoot`: creates or replaces the session's integration. */
export class PutChatwootDto {
  @ApiProperty({ description: 'Chatwoot\'s base URL, http(s) (e.g. https://app.chatwoot.com)', maxLength: MAX_URL_LENGTH, example: 'https://chatwoot.example.com' })
  @IsString() @MaxLength(MAX_URL_LENGTH)
  baseUrl: string;

  @ApiProperty({ description: 'the Chatwoot account id (the number in its URLs: /app/accounts/{accountId})', example: 1 })
  @IsInt() @Min(1) @Max(2147483647)
  accountId: number;

  @ApiPropertyOptional({
    description: 'an access token of a Chatwoot user or agent bot of the account (Profile settings → Access token); stored encrypted, shown masked. Required when creating; omit it (or give the masked value) to keep the stored one',
    maxLength: 512,
  })
  @IsOptional() @IsString() @MinLength(1) @MaxLength(512)
  apiAccessToken?: string;

  @ApiPropertyOptional({ description: 'the id of the Chatwoot inbox (channel type API) the session\'s conversations go to. Omitted when connecting: an API-channel inbox named after the session, with `webhookUrl` as its webhook, is created in the account before the first message (its id is then `inboxId`); omitted on an update: the inbox stays', example: 4 })
  @IsOptional() @IsInt() @Min(1) @Max(2147483647)
  inboxId?: number;

  @ApiPropertyOptional({ description: 'group messages too (one conversation per group); default false' })
  @IsOptional() @IsBoolean()
  groups?: boolean;

  @ApiPropertyOptional({ description: 'prefix an agent\'s replies with the agent\'s name; default false' })
  @IsOptional() @IsBoolean()
  signMessages?: boolean;

  @ApiPropertyOptional({ description: 'import this many days of the session\'s message log once (0: none, default)', minimum: 0, maximum: 90 })
  @IsOptional() @IsInt() @Min(0) @Max(90)
  importDays?: number;

  @ApiPropertyOptional({ description: 'default true; false pauses delivery to Chatwoot (kept and sent when re-activated) and ignores Chatwoot\'s calls' })
  @IsOptional() @IsBoolean()
  active?: boolean;
}

export class ChatwootIntegrationResponse {
  @ApiProperty({ example: 'cwt_01J…' }) id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() sessionId: string;
  @ApiProperty() baseUrl: string;
  @ApiProperty() accountId: number;
  @ApiProperty({ type: Number, nullable: true, description: 'the inbox given, or the one created for the integration; null until it is created' }) inboxId: number | null;
  @ApiProperty({ description: 'masked: `***` and the last 4 characters' }) apiAccessToken: string;
  @ApiProperty() groups: boolean;
  @ApiProperty() signMessages: boolean;
  @ApiProperty() importDays: number;
  @ApiProperty() active: boolean;
  @ApiProperty({ description: 'set it as the inbox\'s webhook URL in Chatwoot (Settings → Inboxes → the inbox → Configuration); it carries the integration\'s secret' })
  webhookUrl: string;
  @ApiProperty({ enum: ['none', 'pending', 'importing', 'imported'] }) importState: string;
  @ApiProperty() importedMessages: number;
  @ApiProperty({ type: String, nullable: true, description: 'why the last call to Chatwoot failed; null while it works' }) lastError: string | null;
  @ApiProperty({ type: Number, nullable: true }) failingSince: number | null;
  @ApiProperty({ type: Number, nullable: true }) disabledAt: number | null;
  @ApiProperty() createdAt: number;
  @ApiProperty() updatedAt: number;
}

export class ChatwootWebhookResponse {
  @ApiProperty({ enum: ['sent', 'ignored'] }) outcome: 'sent' | 'ignored';
  @ApiPropertyOptional({ description: 'why it was ignored' }) reason?: string;
  @ApiPropertyOptional({ type: [String], description: 'the messages the agent\'s message became (one per attachment)' }) messageIds?: string[];
}
