import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, StreamableFile } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { MessageView } from '@app/contracts';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { DeferredLimits, type DeferredRequestLimits } from '../limits/deferred-request-limits';
import type { Page } from '../common/pagination';
import { MessagePage, MessageQueryDto, MessageResponse } from './dto/message.dto';
import { SEND_EXAMPLES } from './dto/send-examples';
import { SendMessageDto } from './dto/send-message.dto';
import { mediaFile } from './media-download';
import { MessagesService } from './messages.service';
import { MessageLogService } from './message-log.service';

@ApiTags('messages')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'not_found')
@Controller('sessions/:id/messages')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly log: MessageLogService,
  ) {}

  /** The body is validated by the service, after the session lookup: another organization's session is 404 first. */
  @Post()
  @RequirePermissions('messages:send')
  @HttpCode(202)
  @ApiEndpoint(
    'Send a message',
    'Queued (202) and sent by the session in order; `message.sent` (or `message.failed`) and then `message.ack` (`delivered`, `read`, `played`) follow as events. Text, media (by URL or base64), location, contact, reaction or poll; 409 unless the session is working or reconnecting (also, `details.status` saying which, when it kept changing state while the send was accepted, as in a move between gateways: try again); 429 when its ratePerMin or ratePerHour is reached.',
    'conflict',
    'validation_error',
  )
  @ApiBody({
    type: SendMessageDto,
    examples: SEND_EXAMPLES,
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]{1,255}$' },
    description: '1..255 printable ASCII; a repeat within 24 h returns the first message',
  })
  @ApiAcceptedResponse({ type: MessageResponse, description: 'queued; the session sends it' })
  send(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @DeferredLimits() requestLimits: DeferredRequestLimits | null,
  ): Promise<MessageView> {
    return this.messages.send(p, id, body, idempotencyKey, undefined, requestLimits);
  }

  @Get()
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List messages', 'The session\'s messages, newest first, filterable by direction, chat and status.', 'validation_error')
  @ApiOkResponse({ type: MessagePage, description: 'newest first' })
  list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: MessageQueryDto): Promise<Page<MessageView>> {
    return this.log.list(p.organizationId, id, query);
  }

  @Get(':messageId')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('Get a message', 'One message with its status and media metadata.')
  @ApiOkResponse({ type: MessageResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('messageId') messageId: string): Promise<MessageView> {
    return this.log.get(p.organizationId, id, messageId);
  }

  @Get(':messageId/media')
  @RequirePermissions('sessions:read')
  @ApiEndpoint(
    'Download a message\'s media',
    'The bytes with the stored mimetype. 404 when the message has no media, the network no longer has it, or an outbound message was already sent (its bytes are deleted); 503 when the network that holds inbound media cannot be reached right now.',
    'gateway_unavailable',
  )
  @ApiOkResponse({
    description: "the bytes; `Content-Type` is the message's stored `media.mimetype` (any type, hence `*/*`), `Content-Disposition` carries its filename",
    headers: {
      'Content-Disposition': { description: "`inline; filename*=UTF-8''<filename>` when the media has a filename", schema: { type: 'string' } },
      'Content-Length': { description: 'when the size is known', schema: { type: 'integer' } },
    },
    content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
  })
  async media(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('messageId') messageId: string): Promise<StreamableFile> {
    return mediaFile(await this.log.media(p.organizationId, id, messageId), messageId);
  }
}
