import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsNotEmpty, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { USER_JID_PATTERN } from '@app/contracts';

export class CreateGroupDto {
  @ApiProperty({ example: 'Project team', minLength: 1, maxLength: 100 })
  @IsString() @IsNotEmpty() @MaxLength(100)
  name: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: 1024,
    items: { type: 'string', pattern: USER_JID_PATTERN.source },
    example: ['15551234567@s.whatsapp.net'],
    description: 'user JIDs like `15551234567@s.whatsapp.net` (bare digits are refused)',
  })
  @ValidateIf((_, v) => v !== undefined)
  @IsArray() @ArrayMaxSize(1024) @IsString({ each: true })
  @Matches(USER_JID_PATTERN, { each: true, message: 'each participant must be a JID like 15551234567@s.whatsapp.net' })
  participants?: string[];
}

export class GroupResponse {
  @ApiProperty({ example: '120363000000000000@g.us' }) groupJid: string;
  @ApiProperty() subject: string;
  @ApiProperty() description: string;
  @ApiProperty() ownerJid: string;
  @ApiProperty({ type: 'integer', description: 'number of participants' }) participants: number;
  @ApiProperty() isAnnounce: boolean;
  @ApiProperty() isLocked: boolean;
}

export class GroupPage {
  @ApiProperty({ type: [GroupResponse] }) data: GroupResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
