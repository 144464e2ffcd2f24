import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString, Matches, ValidateIf } from 'class-validator';
import { CHAT_JID_PATTERN, MESSAGE_STATUSES, MESSAGE_TYPES, MessageDirection, MessageStatus, normalizeChatJid } from '@app/contracts';
import { PageQueryDto } from '../../common/pagination';

/** A chat, or the status posts (CONTRACT 13: a status is a message to status@broadcast). */
const CHAT_OR_STATUS_PATTERN = new RegExp(`^(?:${CHAT_JID_PATTERN.source.replace(/^\^|\$$/g, '')}|status@broadcast)$`);

export class MessageQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['out', 'in'] })
  @ValidateIf((o: MessageQueryDto) => o.direction !== undefined) @IsIn(['out', 'in'])
  direction?: MessageDirection;

  @ApiPropertyOptional({ description: 'a chat JID, or bare digits; `status@broadcast` for the status posts' })
  @ValidateIf((o: MessageQueryDto) => o.chatJid !== undefined)
  @Transform(({ value }) => (typeof value === 'string' ? (normalizeChatJid(value) ?? value) : value))
  @IsString() @Matches(CHAT_OR_STATUS_PATTERN, { message: 'chatJid must be a chat JID or a phone number' })
  chatJid?: string;

  @ApiPropertyOptional({ enum: MESSAGE_STATUSES })
  @ValidateIf((o: MessageQueryDto) => o.status !== undefined) @IsIn(MESSAGE_STATUSES)
  status?: MessageStatus;
}

class MediaResponse {
  @ApiProperty() mimetype: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'bytes' }) size: number | null;
  @ApiProperty({ type: String, nullable: true }) filename: string | null;
  @ApiProperty({ type: String, nullable: true }) caption: string | null;
}

class LocationResponse {
  @ApiProperty() latitude: number;
  @ApiProperty() longitude: number;
  @ApiPropertyOptional({ type: String, nullable: true }) name?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) address?: string | null;
}

class ContactResponse {
  @ApiProperty() fullName: string;
  @ApiProperty() phoneNumber: string;
}

class PollResponse {
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) options: string[];
  @ApiProperty({ type: 'integer' }) selectableCount: number;
}

class ReactionResponse {
  @ApiProperty({ example: '15557654321@s.whatsapp.net' }) from: string;
  @ApiProperty({ example: '👍' }) emoji: string;
}

class PollVoteResponse {
  @ApiProperty({ example: '15557654321@s.whatsapp.net' }) voter: string;
  @ApiProperty({ type: [String], description: 'option names' }) options: string[];
}

/** The Message resource (CONTRACT 10). */
export class MessageResponse {
  @ApiProperty({ example: 'msg_01J…' }) id: string;
  @ApiProperty() sessionId: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ example: '3EB0A1B2C3D4E5F6A7B8C9', description: 'fixed when accepted; every (re)send uses it' }) waMessageId: string;
  @ApiProperty({ enum: ['out', 'in'] }) direction: string;
  @ApiProperty({ example: '15551234567@s.whatsapp.net' }) chatJid: string;
  @ApiProperty({ type: String, nullable: true, description: "sender JID (the session's own for `out`)" }) from: string | null;
  @ApiProperty({ enum: MESSAGE_TYPES }) type: string;
  @ApiProperty({ type: String, nullable: true }) text: string | null;
  @ApiProperty({ type: MediaResponse, nullable: true }) media: MediaResponse | null;
  @ApiProperty({ type: LocationResponse, nullable: true }) location: LocationResponse | null;
  @ApiProperty({ type: ContactResponse, nullable: true }) contact: ContactResponse | null;
  @ApiProperty({ type: PollResponse, nullable: true }) poll: PollResponse | null;
  @ApiProperty({ type: String, nullable: true }) quotedMessageId: string | null;
  @ApiProperty({ enum: MESSAGE_STATUSES }) status: string;
  @ApiProperty({ type: String, nullable: true, description: 'why it failed' }) error: string | null;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) updatedAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms; null until sent' }) sentAt: number | null;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms of the last edit; null when never edited' }) editedAt: number | null;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms when deleted for everyone; the content is kept' }) revokedAt: number | null;
  @ApiProperty({ type: [ReactionResponse], description: 'the reactions it has now, one per reactor' }) reactions: ReactionResponse[];
  @ApiProperty({ type: [PollVoteResponse], description: "a poll's votes, each voter's latest; empty otherwise" }) pollVotes: PollVoteResponse[];
  @ApiProperty({ description: 'stored from the history the phone sent on pairing (setting `syncHistory`); no `message.received` was sent for it' }) fromHistory: boolean;
}

export class MessagePage {
  @ApiProperty({ type: [MessageResponse] }) data: MessageResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
