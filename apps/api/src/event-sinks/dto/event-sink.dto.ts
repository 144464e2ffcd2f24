import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { EVENT_SINK_KINDS, EventSinkKind, SINK_DEFAULTS } from '@app/contracts';
import { DestinationFieldsDto, present, RetryPolicyView } from '../../destinations/dto/destination-fields.dto';
import { MAX_URL_LENGTH } from '../../destinations/dto/destination-validators';
import { IsSinkUrl } from './sink-validators';

/** AMQP exchange names: letters, digits, hyphen, underscore, period, colon (RabbitMQ's own rule); '' is the default exchange */
const EXCHANGE = /^[A-Za-z0-9_.:-]*$/;
/** a routing key template: printable, no control characters */
const ROUTING_KEY = /^[\x21-\x7e]+$/;
/** a publishable NATS subject template: dot-separated non-empty tokens, no wildcard, no whitespace */
const SUBJECT = /^[^\s.*>]+(\.[^\s.*>]+)*$/;

/** A sink's own fields (its broker-side target) beside every destination's. */
class EventSinkFieldsDto extends DestinationFieldsDto {
  @ApiPropertyOptional({ description: 'amqp: the exchange published to (it must exist; `""` is the default exchange)', maxLength: 255, example: 'whatsapp.events' })
  @ValidateIf(present) @IsString() @MaxLength(255) @Matches(EXCHANGE, { message: 'exchange may hold only letters, digits, "-", "_", "." and ":"' })
  exchange?: string;

  @ApiPropertyOptional({
    description: `amqp: routing key template; placeholders {event}, {organizationId}, {sessionId} (\`_\` for an event of no session). Default \`${SINK_DEFAULTS.routingKey}\``,
    maxLength: 255,
    example: 'wa.{event}',
  })
  @ValidateIf(present) @IsString() @MaxLength(255) @Matches(ROUTING_KEY, { message: 'routingKey must be printable ASCII without spaces' })
  routingKey?: string;

  @ApiPropertyOptional({
    description: `nats: subject template (dot-separated tokens, no wildcards); placeholders as routingKey. Default \`${SINK_DEFAULTS.subject}\``,
    maxLength: 255,
    example: 'wa.{organizationId}.{event}',
  })
  @ValidateIf(present) @IsString() @MaxLength(255) @Matches(SUBJECT, { message: 'subject must be dot-separated tokens without spaces or wildcards' })
  subject?: string;
}

const URL_DESCRIPTION =
  'amqp: `amqp://user:password@host:5672/vhost` or `amqps://…`; nats: `nats://user:password@host:4222` (or `nats://token@host`, `tls://…`). ' +
  'The password is stored encrypted and never returned (`***`); on PATCH a URL whose password is `***` keeps the stored one.';

export class CreateEventSinkDto extends EventSinkFieldsDto {
  @ApiProperty({ enum: EVENT_SINK_KINDS })
  @IsIn(EVENT_SINK_KINDS)
  kind: EventSinkKind;

  @ApiProperty({ maxLength: MAX_URL_LENGTH, example: 'amqp://gateway:s3cret@rabbitmq.example.com:5672/whatsapp', description: URL_DESCRIPTION })
  @IsSinkUrl()
  url: string;
}

/** Every field optional; an omitted field keeps its value. The kind cannot change. */
export class UpdateEventSinkDto extends EventSinkFieldsDto {
  @ApiPropertyOptional({ maxLength: MAX_URL_LENGTH, description: URL_DESCRIPTION })
  @ValidateIf(present) @IsSinkUrl()
  url?: string;
}

export class EventSinkResponse {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: EVENT_SINK_KINDS }) kind: EventSinkKind;
  @ApiProperty({ description: 'the broker URL, its password masked as `***`', example: 'amqp://gateway:***@rabbitmq.example.com:5672/whatsapp' }) url: string;
  @ApiProperty({ type: String, nullable: true, description: 'amqp' }) exchange: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'amqp: routing key template' }) routingKey: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'nats: subject template' }) subject: string | null;
  @ApiProperty({ type: [String] }) events: string[];
  @ApiProperty({ type: String, nullable: true }) sessionId: string | null;
  @ApiProperty() active: boolean;
  @ApiProperty({ type: RetryPolicyView }) retryPolicy: RetryPolicyView;
  @ApiProperty({ type: 'integer', nullable: true }) rateLimitPerSecond: number | null;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms when the dispatchers disabled the sink after it kept failing' })
  disabledAt: number | null;
  @ApiProperty({ type: String, nullable: true }) disabledReason: string | null;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) updatedAt: number;
}

export class EventSinkPage {
  @ApiProperty({ type: [EventSinkResponse] }) data: EventSinkResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
