import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsNotEmpty, IsObject, IsString, Matches, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import { GROUP_PARTICIPANT_ACTIONS, GROUP_PARTICIPANT_STATUSES, type GroupParticipantAction, type GroupParticipantStatus, USER_JID_PATTERN } from '@app/contracts';
import { SendMediaDto } from '../../messages/dto/send-message.dto';
import { GroupResponse } from '../../sessions/dto/group.dto';

const given = (_: object, v: unknown) => v !== undefined;

/** WhatsApp's limits: a subject of 100 characters, a description of 2048. */
export const GROUP_SUBJECT_MAX = 100;
export const GROUP_DESCRIPTION_MAX = 2048;
/** How many participants one change may name (WhatsApp adds in batches; a group holds at most 1024). */
export const GROUP_PARTICIPANTS_MAX = 256;

export class UpdateGroupDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: GROUP_SUBJECT_MAX, example: 'Project team (EU)' })
  @ValidateIf(given) @IsString() @IsNotEmpty() @MaxLength(GROUP_SUBJECT_MAX) @Matches(/^[^\0]*$/, { message: 'subject may not contain NUL' })
  subject?: string;

  @ApiPropertyOptional({ maxLength: GROUP_DESCRIPTION_MAX, description: '`""` clears it' })
  @ValidateIf(given) @IsString() @MaxLength(GROUP_DESCRIPTION_MAX) @Matches(/^[^\0]*$/, { message: 'description may not contain NUL' })
  description?: string;

  @ApiPropertyOptional({ description: 'only admins may send messages' })
  @ValidateIf(given) @IsBoolean()
  isAnnounce?: boolean;

  @ApiPropertyOptional({ description: 'only admins may edit the group info (subject, description, picture)' })
  @ValidateIf(given) @IsBoolean()
  isLocked?: boolean;
}

export class GroupParticipantsDto {
  @ApiProperty({ enum: GROUP_PARTICIPANT_ACTIONS })
  @IsIn(GROUP_PARTICIPANT_ACTIONS)
  action: GroupParticipantAction;

  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: GROUP_PARTICIPANTS_MAX,
    items: { type: 'string', pattern: USER_JID_PATTERN.source },
    example: ['15551234567@s.whatsapp.net'],
  })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(GROUP_PARTICIPANTS_MAX) @IsString({ each: true })
  @Matches(USER_JID_PATTERN, { each: true, message: 'each participant must be a JID like 15551234567@s.whatsapp.net' })
  participants: string[];
}

export class JoinGroupDto {
  @ApiProperty({ description: 'the invite code, or the whole link `https://chat.whatsapp.com/<code>`', example: 'F4k3InV1t3C0d3xxxxxxxx', maxLength: 200 })
  @IsString() @IsNotEmpty() @MaxLength(200)
  @Matches(/^(https:\/\/chat\.whatsapp\.com\/)?[A-Za-z0-9]{1,64}$/, { message: 'code must be an invite code or a https://chat.whatsapp.com/<code> link' })
  code: string;
}

export class GroupPictureDto {
  @ApiProperty({ type: SendMediaDto, description: 'as in a send: `{url}` or `{base64}`, with `mimetype` image/jpeg, image/png or image/webp' })
  @IsObject() @ValidateNested() @Type(() => SendMediaDto)
  media: SendMediaDto;
}

export class GroupParticipantResponse {
  @ApiProperty({ example: '15551234567@s.whatsapp.net' }) jid: string;
  @ApiProperty() isAdmin: boolean;
  @ApiProperty({ description: 'the creator; a super admin is an admin too' }) isSuperAdmin: boolean;
}

export class GroupDetailsResponse extends GroupResponse {
  @ApiProperty({ type: [GroupParticipantResponse] }) participantList: GroupParticipantResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'the group picture, null when none' }) pictureUrl: string | null;
}

export class GroupParticipantResultResponse {
  @ApiProperty({ example: '15551234567@s.whatsapp.net' }) jid: string;
  @ApiProperty({ enum: GROUP_PARTICIPANT_STATUSES }) status: GroupParticipantStatus;
}

export class GroupParticipantsResponse {
  @ApiProperty({ type: [GroupParticipantResultResponse] }) data: GroupParticipantResultResponse[];
}

export class GroupInviteResponse {
  @ApiProperty({ example: 'F4k3InV1t3C0d3xxxxxxxx' }) code: string;
  @ApiProperty({ example: 'https://chat.whatsapp.com/F4k3InV1t3C0d3xxxxxxxx' }) url: string;
}
