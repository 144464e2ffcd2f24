import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import { CHANNEL_MESSAGES_MAX, normalizeChatJid, STATUS_TYPES, type StatusType } from '@app/contracts';
import { SendMediaDto } from '../../messages/dto/send-message.dto';

/** WhatsApp's status text limit. */
export const STATUS_TEXT_MAX = 700;
export const STATUS_AUDIENCE_MAX = 1024;
const USER_JID = /^\d{5,20}@s\.whatsapp\.net$/;
const present = (_: object, v: unknown) => v !== undefined;
const typeOf = (o: StatusPostDto): StatusType => o.type ?? 'text';

export class LabelResponse {
  @ApiProperty({ example: '1' }) id: string;
  @ApiProperty({ example: 'New customer' }) name: string;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 19, description: "WhatsApp's label palette index" }) color: number;
}

export class LabelList {
  @ApiProperty({ type: [LabelResponse] }) data: LabelResponse[];
}

export class ChatLabelsResponse {
  @ApiProperty({ example: '15551234567@s.whatsapp.net' }) chatJid: string;
  @ApiProperty({ type: [LabelResponse], description: 'the labels the chat carries now' }) labels: LabelResponse[];
}

export class AddChatLabelDto {
  @ApiProperty({ example: '1', maxLength: 32, description: 'the id of one of the account’s labels (GET …/labels)' })
  @IsString() @IsNotEmpty() @MaxLength(32) @Matches(/^[A-Za-z0-9_-]+$/, { message: 'labelId must be a label id' })
  labelId: string;
}

export class StatusPostDto {
  @ApiPropertyOptional({ enum: STATUS_TYPES, description: 'default `text`' })
  @ValidateIf(present) @IsIn(STATUS_TYPES as unknown as string[], { message: `type must be one of ${STATUS_TYPES.join(', ')}` })
  type?: StatusType;

  @ApiPropertyOptional({ maxLength: STATUS_TEXT_MAX, description: `the text (type text, 1..${STATUS_TEXT_MAX}, required) or a caption (image, video)` })
  @ValidateIf((o: StatusPostDto) => o.text !== undefined || typeOf(o) === 'text')
  @IsString() @IsNotEmpty() @MaxLength(STATUS_TEXT_MAX)
  text?: string;

  @ApiPropertyOptional({ type: SendMediaDto, description: 'required for image and video, refused for text' })
  @ValidateIf((o: StatusPostDto) => o.media !== undefined || typeOf(o) === 'image' || typeOf(o) === 'video')
  @IsObject({ message: 'media is required for image and video statuses' }) @ValidateNested() @Type(() => SendMediaDto)
  media?: SendMediaDto;

  @ApiPropertyOptional({ example: '#1f6feb', pattern: '^#[0-9a-fA-F]{6}$', description: 'a text status’s background' })
  @ValidateIf(present) @IsString() @Matches(/^#[0-9a-fA-F]{6}$/, { message: 'backgroundColor must be a color like #1f6feb' })
  backgroundColor?: string;

  @ApiPropertyOptional({
    type: [String],
    minItems: 1,
    maxItems: STATUS_AUDIENCE_MAX,
    items: { type: 'string' },
    example: ['15551234567@s.whatsapp.net'],
    description: 'who may see it: user JIDs or phone numbers; default all contacts (the people of the session’s 1:1 chats)',
  })
  @ValidateIf(present)
  @Transform(({ value }) => (Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? (normalizeChatJid(v) ?? v) : v)) : value))
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(STATUS_AUDIENCE_MAX) @ArrayUnique()
  @Matches(USER_JID, { each: true, message: 'each audience member must be a phone number or a JID like 15551234567@s.whatsapp.net' })
  audience?: string[];
}

export class ChannelResponse {
  @ApiProperty({ example: '120363012345678901@newsletter' }) jid: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'invite code: https://whatsapp.com/channel/<invite>' }) invite: string | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'followers, when the network tells' }) subscribers: number | null;
}

export class ChannelList {
  @ApiProperty({ type: [ChannelResponse] }) data: ChannelResponse[];
}

export class FollowChannelDto {
  @ApiProperty({ example: 'https://whatsapp.com/channel/0029VaExampleInvite01', maxLength: 200, description: 'the invite code or its link' })
  @IsString() @IsNotEmpty() @MaxLength(200)
  invite: string;
}

export class ChannelMessageResponse {
  @ApiProperty({ example: '120363012345678901@newsletter' }) channelJid: string;
  @ApiProperty({ example: '101', description: "the channel's own message number" }) serverId: string;
  @ApiProperty({ type: String, nullable: true }) text: string | null;
  @ApiProperty({ example: 'text' }) type: string;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) timestamp: number;
}

export class ChannelMessageList {
  @ApiProperty({ type: [ChannelMessageResponse] }) data: ChannelMessageResponse[];
}

export class ChannelMessagesQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: CHANNEL_MESSAGES_MAX, description: 'how many of the newest posts (default 20)' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(CHANNEL_MESSAGES_MAX)
  count?: number;
}
