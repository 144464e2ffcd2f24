import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { PROXY_URL_PATTERN, SESSION_DEFAULTS, SESSION_STATUSES, SYNC_HISTORY_MODES, SyncHistoryMode } from '@app/contracts';

const present = (_: object, v: unknown) => v !== undefined;

/** Settings shared by create and update: defaults apply on create only (an omitted field keeps its value on PATCH), so they are told in descriptions, not as schema `default`s. */
class SessionSettingsDto {
  @ApiPropertyOptional({ description: `mark received messages read (on create, default ${SESSION_DEFAULTS.autoRead})` })
  @ValidateIf(present) @IsBoolean()
  autoRead?: boolean;

  @ApiPropertyOptional({ description: `show "typing…" before each text (on create, default ${SESSION_DEFAULTS.presenceTyping})` })
  @ValidateIf(present) @IsBoolean()
  presenceTyping?: boolean;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 10000, description: `sends accepted in any 60 s (on create, default ${SESSION_DEFAULTS.ratePerMin})` })
  @ValidateIf(present) @IsInt() @Min(1) @Max(10000)
  ratePerMin?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000000, description: `sends accepted in any 3600 s (on create, default ${SESSION_DEFAULTS.ratePerHour})` })
  @ValidateIf(present) @IsInt() @Min(1) @Max(1000000)
  ratePerHour?: number;

  @ApiPropertyOptional({ description: `(on create, default ${SESSION_DEFAULTS.isAdminSession})` })
  @ValidateIf(present) @IsBoolean()
  isAdminSession?: boolean;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 2048,
    example: 'socks5://user:secret@proxy.example:1080',
    description: 'the outbound proxy the session connects to WhatsApp through (http, https, socks4, socks4a, socks5, socks5h); stored encrypted, shown with its credentials masked; null removes it. A loopback, private, link-local or metadata host is refused (422) unless the operator allows it (SESSION_PROXY_ALLOWED); a proxy that cannot be used shows as `proxy_unreachable`',
  })
  @ValidateIf((_: object, v: unknown) => v !== undefined && v !== null) @IsString() @MaxLength(2048)
  @Matches(PROXY_URL_PATTERN, { message: 'proxyUrl must be an http, https, socks4, socks4a, socks5 or socks5h URL: scheme://[user[:password]@]host[:port]' })
  proxyUrl?: string | null;

  @ApiPropertyOptional({
    enum: SYNC_HISTORY_MODES,
    description: `history to store from the phone on pairing: \`none\`, \`recent\` (what WhatsApp sends a new linked device), \`full\` (on create, default ${SESSION_DEFAULTS.syncHistory}); read at the next pairing`,
  })
  @ValidateIf(present) @IsIn(SYNC_HISTORY_MODES)
  syncHistory?: SyncHistoryMode;
  @ApiPropertyOptional({ description: `reject incoming calls; \`call.incoming\` still fires, with \`rejected: true\` (on create, default ${SESSION_DEFAULTS.rejectCalls})` })
  @ValidateIf(present) @IsBoolean()
  rejectCalls?: boolean;
  @ApiPropertyOptional({ description: `announce contacts' statuses (stories) as status.received events (on create, default ${SESSION_DEFAULTS.receiveStatus})` })
  @ValidateIf(present) @IsBoolean()
  receiveStatus?: boolean;
}

export class CreateSessionDto extends SessionSettingsDto {
  @ApiProperty({ example: 'Support line', minLength: 1, maxLength: 200 })
  @IsString() @IsNotEmpty() @MaxLength(200)
  label: string;
}

export class UpdateSessionDto extends SessionSettingsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @ValidateIf(present) @IsString() @IsNotEmpty() @MaxLength(200)
  label?: string;
}

export class RequestCodeDto {
  @ApiProperty({ example: '15551234567', pattern: '^\\+?\\d{6,20}$', description: 'digits of the number to pair, country code first' })
  @IsString() @Matches(/^\+?\d{6,20}$/, { message: 'phoneNumber must be 6-20 digits, country code first' })
  phoneNumber: string;
}

export class SessionResponse {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ type: String, nullable: true }) createdByUserId: string | null;
  @ApiProperty({ type: String, nullable: true }) gatewayId: string | null;
  @ApiProperty() label: string;
  @ApiProperty({ enum: SESSION_STATUSES }) status: string;
  @ApiProperty({ type: String, nullable: true }) phoneNumber: string | null;
  @ApiProperty({ type: String, nullable: true, example: '15551234567@s.whatsapp.net' }) waJid: string | null;
  @ApiProperty({ type: String, nullable: true, example: '123456789@lid' }) waLid: string | null;
  @ApiProperty() isAdminSession: boolean;
  @ApiProperty() autoRead: boolean;
  @ApiProperty() presenceTyping: boolean;
  @ApiProperty({ type: 'integer' }) ratePerMin: number;
  @ApiProperty({ type: 'integer' }) ratePerHour: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) updatedAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms' }) lastConnectedAt: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'socks5://***@proxy.example:1080', description: 'the outbound proxy with its credentials masked; null: direct' }) proxyUrl: string | null;
  @ApiProperty({ enum: SYNC_HISTORY_MODES }) syncHistory: string;
  @ApiProperty({ description: 'incoming calls are rejected' }) rejectCalls: boolean;
  @ApiProperty({ description: "contacts' statuses are announced as status.received" }) receiveStatus: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'connection_lost: Stream Errored (ack) (close code 500)',
    description: "why the session is in its status, the same words as session.status's reason (qr_not_scanned, forbidden, connection_lost: <cause>, pairing_code_dropped, …; docs/sessions.md)",
  })
  statusReason: string | null;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms of the next connect attempt while a reconnect is scheduled, else null' })
  nextAttemptAt: number | null;
}

export class SessionPage {
  @ApiProperty({ type: [SessionResponse] }) data: SessionResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class SessionQrResponse {
  @ApiProperty({ description: 'the QR payload to render' }) qr: string;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) expiresAt: number;
}

export class PairingCodeResponse {
  @ApiProperty({ example: 'ABCD1234', description: 'enter it on the phone under Linked devices' }) code: string;
}
