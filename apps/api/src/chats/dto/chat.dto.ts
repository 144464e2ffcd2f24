import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { MESSAGE_STATUSES, MessageDirection, MessageStatus } from '@app/contracts';
import { PageQueryDto } from '../../common/pagination';
import { MessageResponse } from '../../messages/dto/message.dto';

/** `GET …/chats`: pages like the other lists, with a cursor of its own form (chats are ordered by their last message). */
export class ChatQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, description: 'page size (default 20)' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100)
  limit?: number;

  @ApiPropertyOptional({ pattern: '^[A-Za-z0-9_-]{1,256}$', description: 'nextCursor of the previous page' })
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{1,256}$/)
  cursor?: string;
}

/** `GET …/chats/{jid}/messages`: the message log's filters, the chat fixed by the path. */
export class ChatMessagesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['out', 'in'] })
  @ValidateIf((o: ChatMessagesQueryDto) => o.direction !== undefined) @IsIn(['out', 'in'])
  direction?: MessageDirection;

  @ApiPropertyOptional({ enum: MESSAGE_STATUSES })
  @ValidateIf((o: ChatMessagesQueryDto) => o.status !== undefined) @IsIn(MESSAGE_STATUSES)
  status?: MessageStatus;
}

export class ReadChatDto {
  @ApiPropertyOptional({ example: 'msg_01J…', description: 'a message of this chat: marked read up to it (default: the newest)' })
  @ValidateIf((o: ReadChatDto) => o.messageId !== undefined) @IsString() @Matches(/^msg_[0-9A-Za-z]{26}$/, { message: 'messageId must be a message id (msg_…)' })
  messageId?: string;
}

/** Latest mute end WhatsApp can hold: 9999-12-31. */
export const MAX_MUTE_UNTIL = Date.UTC(9999, 11, 31);

export class MuteChatDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 4102444800000, description: 'epoch ms until which the chat is muted; a time in the future (for "always", a far one)' })
  @Type(() => Number) @IsInt() @Min(0) @Max(MAX_MUTE_UNTIL)
  until: number;
}

/** A chat (CONTRACT 12). */
export class ChatResponse {
  @ApiProperty({ example: '15551234567@s.whatsapp.net' }) jid: string;
  @ApiProperty({ type: String, nullable: true, description: "the name a person reads: a group's subject; a contact's saved name (the account's address book or the phone's chat name), else its push name; null when none is known" }) name: string | null;
  @ApiProperty() isGroup: boolean;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'received messages not read yet (0 with autoRead on)' }) unreadCount: number;
  @ApiProperty() archived: boolean;
  @ApiProperty() pinned: boolean;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms; null when not muted' }) mutedUntil: number | null;
  @ApiProperty({ type: MessageResponse, nullable: true, description: 'the newest message of the chat in the log' }) lastMessage: MessageResponse | null;
  @ApiProperty({ type: [String], example: ['2'], description: 'ids of the WhatsApp Business labels the chat carries (GET …/labels names them); [] on other accounts' })
  labels: string[];
}

export class ChatPage {
  @ApiProperty({ type: [ChatResponse] }) data: ChatResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
