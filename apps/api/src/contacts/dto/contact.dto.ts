import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsObject, IsString, Matches, MaxLength, MinLength, ValidateIf, ValidateNested } from 'class-validator';
import { ACCOUNT_PRESENCES, CHAT_PRESENCES, MAX_CONTACT_CHECK_NUMBERS, MAX_PROFILE_ABOUT_LENGTH, MAX_PROFILE_NAME_LENGTH } from '@app/contracts';
import { SendMediaDto } from '../../messages/dto/send-message.dto';

/** A phone number (digits, optionally with +, spaces, dashes, parentheses) or a `<digits>@s.whatsapp.net` jid. */
export const CHECK_NUMBER_PATTERN = /^(\+?[\d\s()-]{5,32}|\d{5,20}@s\.whatsapp\.net)$/;

export class CheckContactsDto {
  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: MAX_CONTACT_CHECK_NUMBERS,
    items: { type: 'string', pattern: CHECK_NUMBER_PATTERN.source },
    example: ['+1 555 123 4567', '4915112345678'],
    description: 'phone numbers (digits with +, spaces, dashes) or `<digits>@s.whatsapp.net` jids; answered in this order',
  })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_CONTACT_CHECK_NUMBERS) @IsString({ each: true })
  @Matches(CHECK_NUMBER_PATTERN, { each: true, message: 'each number must be a phone number (5 to 20 digits) or a jid <digits>@s.whatsapp.net' })
  numbers: string[];
}

export class ContactCheckResponse {
  @ApiProperty({ description: 'the number as given' }) input: string;
  @ApiProperty() exists: boolean;
  @ApiProperty({ type: String, nullable: true, example: '15551234567@s.whatsapp.net' }) jid: string | null;
  @ApiProperty({ type: String, nullable: true, example: '123456789012345@lid' }) lid: string | null;
}

export class ContactCheckList {
  @ApiProperty({ type: [ContactCheckResponse] }) data: ContactCheckResponse[];
}

export class ContactViewResponse {
  @ApiProperty({ example: '15551234567@s.whatsapp.net', description: 'the number’s jid, or the LID while the number is not known' }) jid: string;
  @ApiProperty({ type: String, nullable: true, example: '123456789012345@lid' }) lid: string | null;
  @ApiProperty({ type: String, nullable: true, example: '15551234567' }) phoneNumber: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'the name the account’s address book gives the contact' }) name: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'the name the contact gave itself (push name)' }) pushName: string | null;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'a business’s name as WhatsApp verified it; null for a person or an unverified business' }) verifiedName: string | null;
  @ApiProperty() isBusiness: boolean;
  @ApiProperty() blocked: boolean;
}

export class ContactDetailResponse extends ContactViewResponse {
  @ApiProperty({ type: String, nullable: true, description: 'the contact’s about text; null when hidden or none' }) about: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'the contact’s picture URL; null when hidden or none' }) pictureUrl: string | null;
}

export class ContactPage {
  @ApiProperty({ type: [ContactViewResponse] }) data: ContactViewResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class ChatPresenceDto {
  @ApiProperty({ enum: CHAT_PRESENCES, description: '`composing` (typing…), `recording` (recording audio…) or `paused`' })
  @IsIn(CHAT_PRESENCES)
  presence: (typeof CHAT_PRESENCES)[number];
}

export class AccountPresenceDto {
  @ApiProperty({ enum: ACCOUNT_PRESENCES })
  @IsIn(ACCOUNT_PRESENCES)
  presence: (typeof ACCOUNT_PRESENCES)[number];
}

export class ProfileResponse {
  @ApiProperty({ example: '15551234567@s.whatsapp.net' }) jid: string;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) about: string | null;
  @ApiProperty({ type: String, nullable: true }) pictureUrl: string | null;
}

export class UpdateProfileDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_PROFILE_NAME_LENGTH, example: 'Support desk', description: 'the push name contacts see' })
  @ValidateIf((o: UpdateProfileDto) => o.name !== undefined)
  @IsString() @MinLength(1) @MaxLength(MAX_PROFILE_NAME_LENGTH) @Matches(/^[^\0\r\n]*\S[^\0\r\n]*$/, { message: 'name must not be blank nor contain NUL or line breaks' })
  name?: string;

  @ApiPropertyOptional({ maxLength: MAX_PROFILE_ABOUT_LENGTH, example: 'Replies within a day', description: 'the about text ("" clears it)' })
  @ValidateIf((o: UpdateProfileDto) => o.about !== undefined)
  @IsString() @MaxLength(MAX_PROFILE_ABOUT_LENGTH) @Matches(/^[^\0]*$/, { message: 'about must not contain NUL' })
  about?: string;
}

export class ProfilePictureDto {
  @ApiProperty({ type: SendMediaDto, description: 'an image (image/jpeg, image/png or image/webp) by URL or base64, as a send’s media' })
  @IsObject() @ValidateNested() @Type(() => SendMediaDto)
  media: SendMediaDto;
}
