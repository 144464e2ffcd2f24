import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Length, Matches } from 'class-validator';
import { CHAT_JID_PATTERN, normalizeChatJid } from '@app/contracts';
import { TEXT_MAX } from './send-message.dto';

/** `PATCH …/messages/{messageId}` (CONTRACT 12): the new text, or caption. */
export class EditMessageDto {
  @ApiProperty({ minLength: 1, maxLength: TEXT_MAX, description: 'the new text (a text message) or caption (image, video, document)' })
  @IsString() @Length(1, TEXT_MAX)
  text: string;
}

/** `POST …/messages/{messageId}:forward` (CONTRACT 12). */
export class ForwardMessageDto {
  @ApiProperty({ example: '15551234567@s.whatsapp.net', description: 'a JID (`…@s.whatsapp.net`, `…@lid`, `…@g.us`) or bare digits' })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? (normalizeChatJid(value) ?? value) : value))
  @IsString()
  @Matches(CHAT_JID_PATTERN, { message: 'to must be a phone number or a JID (…@s.whatsapp.net, …@lid, …@g.us)' })
  to: string;
}
