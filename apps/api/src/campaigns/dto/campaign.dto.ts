import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CAMPAIGN_MAX_RECIPIENTS, CAMPAIGN_MESSAGE_TYPES, CAMPAIGN_STATUSES, RECIPIENT_STATUSES, WEEKDAYS } from '@app/contracts';

/** The shapes of CONTRACT 17 for the OpenAPI document; the body is checked by CampaignsService (`campaign-body.ts`). */
export class SendWindowDto {
  @ApiProperty({ enum: WEEKDAYS, isArray: true, example: ['mon', 'tue', 'wed', 'thu', 'fri'] }) days: string[];
  @ApiProperty({ example: '09:00', description: 'HH:mm, local time in timeZone' }) from: string;
  @ApiProperty({ example: '18:00', description: 'HH:mm, after from (a window does not cross midnight)' }) to: string;
  @ApiProperty({ example: 'Asia/Jakarta', description: 'IANA time zone; DST is followed' }) timeZone: string;
}

export class CampaignPacingDto {
  @ApiProperty({ minimum: 0, example: 20000 }) minDelayMs: number;
  @ApiProperty({ minimum: 0, example: 60000, description: 'at least minDelayMs; each gap is drawn uniformly in [minDelayMs, maxDelayMs]' }) maxDelayMs: number;
  @ApiPropertyOptional({ description: '"typing…" before each message (default true)' }) typing?: boolean;
  @ApiPropertyOptional({ minimum: 1, nullable: true }) perHour?: number;
  @ApiPropertyOptional({ minimum: 1, nullable: true, description: 'per calendar day in the window\'s time zone (UTC without a window)' }) perDay?: number;
}

export class CampaignWarmupDto {
  @ApiProperty({ minimum: 1, example: 20 }) startPerDay: number;
  @ApiProperty({ minimum: 0, maximum: 1000, example: 30 }) growthPercent: number;
}

export class CampaignMediaDto {
  @ApiPropertyOptional({ description: 'http(s) URL the API fetches once, at creation (through the SSRF guard); exactly one of url and base64', maxLength: 2048 }) url?: string;
  @ApiPropertyOptional({ description: 'the bytes, base64 (at most MEDIA_MAX_BYTES); exactly one of url and base64' }) base64?: string;
  @ApiPropertyOptional({ example: 'image/jpeg', description: 'default: what the first bytes show (JPEG, PNG, GIF, WebP, PDF, Ogg/Opus, MP4, MP3), else the type\'s usual one' }) mimetype?: string;
  @ApiPropertyOptional({ example: 'menu.pdf', maxLength: 255 }) filename?: string;
}

export class CampaignMessageDto {
  @ApiPropertyOptional({ enum: CAMPAIGN_MESSAGE_TYPES, description: 'default text' }) type?: string;
  @ApiPropertyOptional({
    example: 'Hi {{name}}, your order {{order}} is ready',
    description: `the template, {{variable}} replaced per recipient: the text of a text (1..4096), the caption of an image, a video or a document (optional, 1..1024); not allowed for the other types`,
  })
  text?: string;
  @ApiPropertyOptional({ type: CampaignMediaDto, description: 'required for image, video, audio, document, sticker and voice: fetched or decoded once at creation and stored once for the campaign' })
  media?: CampaignMediaDto;
  @ApiPropertyOptional() location?: object;
  @ApiPropertyOptional() contact?: object;
  @ApiPropertyOptional() poll?: object;
}

export class CampaignRecipientDto {
  @ApiProperty({ example: '15551234567' }) to: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { name: 'Ana', order: 'A-17' } }) variables?: Record<string, string>;
}

export class CreateCampaignDto {
  @ApiProperty({ maxLength: 200 }) name: string;
  @ApiProperty({ type: CampaignMessageDto }) message: CampaignMessageDto;
  @ApiPropertyOptional({ type: [CampaignRecipientDto], maxItems: CAMPAIGN_MAX_RECIPIENTS }) recipients?: CampaignRecipientDto[];
  @ApiPropertyOptional({ description: 'instead of recipients: CSV with a header row; the column `to` (or `phone`) is the number, every other column a variable' })
  recipientsCsv?: string;
  @ApiPropertyOptional({ description: 'epoch ms; default now' }) startAt?: number;
  @ApiPropertyOptional({ type: SendWindowDto }) window?: SendWindowDto;
  @ApiPropertyOptional({ type: CampaignPacingDto }) pacing?: CampaignPacingDto;
  @ApiPropertyOptional({ type: CampaignWarmupDto }) warmup?: CampaignWarmupDto;
  @ApiPropertyOptional({ description: 'default true: numbers the network check says are not on WhatsApp are skipped' }) skipNotOnWhatsApp?: boolean;
}

export class CampaignCountsDto {
  @ApiProperty() total: number;
  @ApiProperty() pending: number;
  @ApiProperty() sent: number;
  @ApiProperty() delivered: number;
  @ApiProperty() read: number;
  @ApiProperty() failed: number;
  @ApiProperty() skipped: number;
  @ApiProperty() optedOut: number;
  @ApiProperty() replied: number;
}

export class CampaignResponse {
  @ApiProperty({ example: 'cmp_01J…' }) id: string;
  @ApiProperty() sessionId: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: CAMPAIGN_STATUSES }) status: string;
  @ApiProperty({ type: CampaignCountsDto }) counts: CampaignCountsDto;
  @ApiProperty({ type: SendWindowDto, nullable: true }) window: SendWindowDto | null;
  @ApiProperty({ type: CampaignPacingDto }) pacing: CampaignPacingDto;
  @ApiProperty({ type: CampaignWarmupDto, nullable: true }) warmup: CampaignWarmupDto | null;
  @ApiProperty() skipNotOnWhatsApp: boolean;
  @ApiProperty() startAt: number;
  @ApiProperty({ type: Number, nullable: true }) nextSendAt: number | null;
  @ApiProperty() createdAt: number;
  @ApiProperty({ type: Number, nullable: true }) completedAt: number | null;
}

export class CampaignPage {
  @ApiProperty({ type: [CampaignResponse] }) data: CampaignResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class CampaignRecipientResponse {
  @ApiProperty() position: number;
  @ApiProperty() to: string;
  @ApiProperty({ enum: RECIPIENT_STATUSES }) status: string;
  @ApiProperty({ type: String, nullable: true }) messageId: string | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty() updatedAt: number;
}

export class CampaignRecipientPage {
  @ApiProperty({ type: [CampaignRecipientResponse] }) data: CampaignRecipientResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'the last position of the page' }) nextCursor: string | null;
}

export class OptOutResponse {
  @ApiProperty() jid: string;
  @ApiProperty() keyword: string;
  @ApiProperty() createdAt: number;
}

export class OptOutPage {
  @ApiProperty({ type: [OptOutResponse] }) data: OptOutResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
