import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsInt,
  IsNumber,
  IsObject,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { CAPTIONED_MEDIA_TYPES, CHAT_JID_PATTERN, normalizeChatJid, OUTBOUND_MESSAGE_TYPES, OutboundMessageType, SEND_AT_MAX_AHEAD_MS } from '@app/contracts';

export const TEXT_MAX = 4096;
export const CAPTION_MAX = 1024;
export const MENTIONS_MAX = 50;
export const POLL_OPTIONS = { min: 2, max: 12 } as const;
/** An Idempotency-Key (a send's header, a bulk item's `idempotencyKey`): 1..255 printable ASCII. */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;
/**
 * The body field that carries each type's content, one entry per type (docs/messages.md, "adding a message type"): a
 * type missing here does not compile, and the field is required for it and refused for the others.
 */
const CONTENT_FIELD = {
  text: 'text',
  image: 'media',
  video: 'media',
  audio: 'media',
  document: 'media',
  voice: 'media',
  sticker: 'media',
  location: 'location',
  contact: 'contact',
  reaction: 'reaction',
  poll: 'poll',
  pollVote: 'pollVote',
} as const satisfies Record<OutboundMessageType, keyof SendMessageDto>;
const carriedIn = (field: keyof SendMessageDto): OutboundMessageType[] => OUTBOUND_MESSAGE_TYPES.filter((type) => CONTENT_FIELD[type] === field);
const MEDIA_TYPES = carriedIn('media');
const CAPTIONED: OutboundMessageType[] = [...CAPTIONED_MEDIA_TYPES];
/** A media's MIME type (`image/jpeg`, `audio/ogg; codecs=opus`) and file name, as a send and a campaign take them. */
export const MIMETYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;.*)?$/;
export const FILENAME = /^[^/\\\0\r\n]+$/;
const USER_JID = /^\d{5,20}@(s\.whatsapp\.net|lid)$/;
const MESSAGE_ID = /^[A-Za-z0-9_]{1,64}$/;

const typeOf = (o: object): unknown => (o as { type?: unknown }).type ?? 'text';
const present = (v: unknown) => v !== undefined && v !== null;

/** A check with its own message; `problem` sees the value and the object it sits in. */
function Rule(name: string, problem: (value: unknown, object: object) => string | null) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown, args) => problem(value, args!.object) === null,
        defaultMessage: (args) => problem(args!.value, args!.object) ?? `${propertyName} is invalid`,
      },
    });
}

/**
 * The content field of a message type: required for `required` types, allowed for `allowed` ones, refused for the
 * rest, so a body says one thing only (no `media` on a text, no `poll` on an image).
 */
function ContentOf(required: OutboundMessageType[], allowed: OutboundMessageType[] = []) {
  return (object: object, propertyName: string) => {
    ValidateIf((o: object) => present((o as Record<string, unknown>)[propertyName]) || required.includes(typeOf(o) as OutboundMessageType))(
      object,
      propertyName,
    );
    Rule('contentOf', (value, o) => {
      const type = typeOf(o) as OutboundMessageType;
      // an unknown type is reported on `type` alone
      if (!(OUTBOUND_MESSAGE_TYPES as readonly unknown[]).includes(type)) return null;
      if (required.includes(type)) return present(value) ? null : `${propertyName} is required for type ${type}`;
      if (allowed.includes(type)) return null;
      return `${propertyName} is not allowed for type ${String(type)}`;
    })(object, propertyName);
  };
}

/** Bare digits (with +, spaces, dashes) become `<digits>@s.whatsapp.net`; anything else stays as given, to be refused. */
const toJid = ({ value }: { value: unknown }) => (typeof value === 'string' ? (normalizeChatJid(value) ?? value) : value);

/** One emoji: a single grapheme that is pictographic (flags and keycaps included). */
function isOneEmoji(value: string): boolean {
  if (value.length > 32) return false;
  const graphemes = [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(value)];
  return graphemes.length === 1 && /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u.test(value);
}

export class SendMediaDto {
  @ApiPropertyOptional({ description: 'http(s) URL the API fetches (through the SSRF guard); exactly one of url and base64', maxLength: 2048 })
  @ValidateIf((o: SendMediaDto) => o.url !== undefined || o.base64 === undefined)
  @Rule('urlXorBase64', (_, o) => (present((o as SendMediaDto).url) === present((o as SendMediaDto).base64) ? 'exactly one of media.url and media.base64 is required' : null))
  @Rule('httpUrl', (v) => httpUrlProblem(v))
  url?: string;

  @ApiPropertyOptional({ description: 'the bytes, base64; exactly one of url and base64' })
  @ValidateIf((o: SendMediaDto) => o.base64 !== undefined)
  @IsString()
  @Rule('base64', (v) => (typeof v !== 'string' || isPaddedBase64(v) ? null : 'base64 must be non-empty padded base64'))
  base64?: string;

  @ApiProperty({ example: 'image/jpeg' })
  @IsString()
  @MaxLength(255)
  @Matches(MIMETYPE, { message: 'mimetype must be a MIME type like image/jpeg' })
  mimetype: string;

  @ApiPropertyOptional({ example: 'invoice.pdf', maxLength: 255 })
  @ValidateIf((o: SendMediaDto) => o.filename !== undefined)
  @IsString()
  @Length(1, 255)
  @Matches(FILENAME, { message: 'filename may not contain slashes, NUL or line breaks' })
  filename?: string;
}

/** Checked without a grouped regex, which would backtrack over a 20 MB string. */
export function isPaddedBase64(v: string): boolean {
  return v.length > 0 && v.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(v);
}

export function httpUrlProblem(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') return 'url must be a string';
  if (value.length > 2048) return 'url must be at most 2048 characters';
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'url must be an absolute http(s) URL';
  } catch {
    return 'url must be an absolute http(s) URL';
  }
}

export class SendLocationDto {
  @ApiProperty({ minimum: -90, maximum: 90 })
  @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-90) @Max(90)
  latitude: number;

  @ApiProperty({ minimum: -180, maximum: 180 })
  @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-180) @Max(180)
  longitude: number;

  @ApiPropertyOptional({ maxLength: 256 })
  @ValidateIf((o: SendLocationDto) => o.name !== undefined) @IsString() @Length(1, 256)
  name?: string;

  @ApiPropertyOptional({ maxLength: 1024 })
  @ValidateIf((o: SendLocationDto) => o.address !== undefined) @IsString() @Length(1, 1024)
  address?: string;
}

export class SendContactDto {
  @ApiProperty({ maxLength: 256 })
  @IsString() @Length(1, 256)
  fullName: string;

  @ApiProperty({ example: '+1 555 123 4567', description: 'digits, with + spaces or dashes' })
  @IsString() @Matches(/^\+?(?:[\s-]*\d){5,20}[\s-]*$/, { message: 'phoneNumber must be 5-20 digits, optionally with +, spaces or dashes' })
  phoneNumber: string;
}

export class SendReactionDto {
  @ApiProperty({ description: 'the id (msg_…) of a message of this session' })
  @IsString() @Matches(MESSAGE_ID, { message: 'messageId must be a message id' })
  messageId: string;

  @ApiProperty({ example: '👍', description: 'one emoji; "" removes the reaction' })
  @IsString()
  @Rule('oneEmoji', (v) => (typeof v === 'string' && (v === '' || isOneEmoji(v)) ? null : 'emoji must be one emoji or ""'))
  emoji: string;
}

export class SendPollDto {
  @ApiProperty({ maxLength: 255 })
  @IsString() @Length(1, 255)
  name: string;

  @ApiProperty({ type: [String], minItems: POLL_OPTIONS.min, maxItems: POLL_OPTIONS.max })
  @IsArray() @ArrayMinSize(POLL_OPTIONS.min) @ArrayMaxSize(POLL_OPTIONS.max) @ArrayUnique({ message: 'options must be distinct' })
  @IsString({ each: true }) @Length(1, 100, { each: true })
  options: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: POLL_OPTIONS.max, description: 'how many options a voter may pick, at most options.length (default 1)' })
  @ValidateIf((o: SendPollDto) => o.selectableCount !== undefined)
  @IsInt() @Min(1)
  @Rule('selectableCount', (v, o) => {
    const options = (o as SendPollDto).options;
    return Array.isArray(options) && typeof v === 'number' && v > options.length ? 'selectableCount must be at most the number of options' : null;
  })
  selectableCount?: number;
}

/** A vote on a poll of the session (CONTRACT 12): option names of that poll. */
export class SendPollVoteDto {
  @ApiProperty({ description: 'the id (msg_…) of a poll of this session' })
  @IsString() @Matches(MESSAGE_ID, { message: 'pollMessageId must be a message id' })
  pollMessageId: string;

  @ApiProperty({ type: [String], minItems: 1, maxItems: POLL_OPTIONS.max, description: 'option names of the poll (at most its selectableCount)' })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(POLL_OPTIONS.max) @ArrayUnique({ message: 'options must be distinct' })
  @IsString({ each: true }) @Length(1, 100, { each: true })
  options: string[];
}

/** `POST /sessions/{id}/messages` (CONTRACT 10). Which content field is required follows `type`. */
export class SendMessageDto {
  @ApiProperty({ example: '15551234567@s.whatsapp.net', description: 'a JID (`…@s.whatsapp.net`, `…@lid`, `…@g.us`) or bare digits' })
  @Transform(toJid)
  @IsString()
  @Matches(CHAT_JID_PATTERN, { message: 'to must be a phone number or a JID (…@s.whatsapp.net, …@lid, …@g.us)' })
  to: string;

  @ApiPropertyOptional({ enum: OUTBOUND_MESSAGE_TYPES, description: 'default `text`' })
  @ValidateIf((o: SendMessageDto) => o.type !== undefined)
  @Rule('messageType', (v) => ((OUTBOUND_MESSAGE_TYPES as readonly unknown[]).includes(v) ? null : `type must be one of ${OUTBOUND_MESSAGE_TYPES.join(', ')}`))
  type?: OutboundMessageType;

  @ApiPropertyOptional({ description: `the text (type text, 1..${TEXT_MAX}) or a caption (image, video, document, 1..${CAPTION_MAX})` })
  @ContentOf(carriedIn('text'), CAPTIONED)
  @IsString()
  @Rule('textLength', (v, o) => {
    if (typeof v !== 'string') return null;
    const max = typeOf(o) === 'text' ? TEXT_MAX : CAPTION_MAX;
    return v.length >= 1 && v.length <= max ? null : `text must be 1..${max} characters for type ${String(typeOf(o))}`;
  })
  text?: string;

  @ApiPropertyOptional({ type: SendMediaDto, description: 'required for image, video, audio, document, voice (a voice note), sticker (image/webp)' })
  @ContentOf(carriedIn('media'))
  @IsObject() @ValidateNested() @Type(() => SendMediaDto)
  @Rule('stickerWebp', (v, o) =>
    typeOf(o) === 'sticker' && typeof (v as SendMediaDto | undefined)?.mimetype === 'string' && !/^image\/webp\b/i.test((v as SendMediaDto).mimetype)
      ? 'media.mimetype must be image/webp for a sticker'
      : null,
  )
  media?: SendMediaDto;

  @ApiPropertyOptional({ type: SendLocationDto })
  @ContentOf(carriedIn('location'))
  @IsObject() @ValidateNested() @Type(() => SendLocationDto)
  location?: SendLocationDto;

  @ApiPropertyOptional({ type: SendContactDto })
  @ContentOf(carriedIn('contact'))
  @IsObject() @ValidateNested() @Type(() => SendContactDto)
  contact?: SendContactDto;

  @ApiPropertyOptional({ type: SendReactionDto })
  @ContentOf(carriedIn('reaction'))
  @IsObject() @ValidateNested() @Type(() => SendReactionDto)
  reaction?: SendReactionDto;

  @ApiPropertyOptional({ type: SendPollDto })
  @ContentOf(carriedIn('poll'))
  @IsObject() @ValidateNested() @Type(() => SendPollDto)
  poll?: SendPollDto;

  @ApiPropertyOptional({ type: SendPollVoteDto, description: 'required for pollVote' })
  @ContentOf(carriedIn('pollVote'))
  @IsObject() @ValidateNested() @Type(() => SendPollVoteDto)
  pollVote?: SendPollVoteDto;

  @ApiPropertyOptional({
    description:
      'epoch ms: the message is stored `scheduled` and queued when this time comes (CONTRACT 17), up to 366 days ahead; counted against the session\'s rates then, not now. A time already past is a send now. Cancel it with DELETE …/messages/{messageId} while it is scheduled.',
  })
  @ValidateIf((o: SendMessageDto) => o.sendAt !== undefined)
  @IsInt()
  @Rule('sendAtAhead', (v) => (typeof v === 'number' && v > Date.now() + SEND_AT_MAX_AHEAD_MS ? 'sendAt must be at most 366 days ahead' : null))
  sendAt?: number;

  @ApiPropertyOptional({ description: 'type text: `false` sends a text with a URL without its link preview (default true)' })
  @ContentOf([], ['text'])
  @IsBoolean()
  linkPreview?: boolean;

  @ApiPropertyOptional({ description: 'reply to this message (msg_…) of the session' })
  @ContentOf([], ['text', ...MEDIA_TYPES, 'location', 'contact', 'poll'])
  @IsString() @Matches(MESSAGE_ID, { message: 'quotedMessageId must be a message id' })
  quotedMessageId?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MENTIONS_MAX, description: 'user JIDs (or bare digits) mentioned in the text' })
  @ContentOf([], ['text', ...CAPTIONED])
  @Transform(({ value }) => (Array.isArray(value) ? value.map((v) => toJid({ value: v })) : value))
  @IsArray() @ArrayMaxSize(MENTIONS_MAX)
  @Matches(USER_JID, { each: true, message: 'mentions must be user JIDs (…@s.whatsapp.net or …@lid) or phone numbers' })
  mentions?: string[];
}
