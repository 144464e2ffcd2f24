import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, StreamableFile } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiProduces,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { MessageView } from '@app/contracts';
import { CurrentPrincipal, RequirePermissions } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import type { Page } from '../common/pagination';
import { MessagePage, MessageQueryDto, MessageResponse } from './dto/message.dto';
import { SendMessageDto } from './dto/send-message.dto';
import { MessagesService } from './messages.service';

@ApiTags('messages')
@ApiBearerAuth()
@Controller('sessions/:id/messages')
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  /** The body is validated by the service, after the session lookup: another organization's session is 404 first. */
  @Post()
  @RequirePermissions('messages:send')
  @HttpCode(202)
  @ApiBody({ type: SendMessageDto })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1..255 printable ASCII; a repeat within 24 h returns the first message' })
  @ApiAcceptedResponse({ type: MessageResponse, description: 'queued; the session sends it' })
  @ApiTooManyRequestsResponse({ description: "the session's ratePerMin or ratePerHour is reached; Retry-After in seconds" })
  send(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
  ): Promise<MessageView> {
    return this.messages.send(p, id, body, idempotencyKey);
  }

  @Get()
  @RequirePermissions('sessions:read')
  @ApiOkResponse({ type: MessagePage, description: 'newest first' })
  list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: MessageQueryDto): Promise<Page<MessageView>> {
    return this.messages.list(p.organizationId, id, query);
  }

  @Get(':messageId')
  @RequirePermissions('sessions:read')
  @ApiOkResponse({ type: MessageResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('messageId') messageId: string): Promise<MessageView> {
    return this.messages.get(p.organizationId, id, messageId);
  }

  @Get(':messageId/media')
  @RequirePermissions('sessions:read')
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'the bytes, with the stored mimetype' })
  @ApiNotFoundResponse({ description: 'no media, the network no longer has it, or an outbound message already sent (its bytes are deleted)' })
  async media(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('messageId') messageId: string): Promise<StreamableFile> {
    const media = await this.messages.media(p.organizationId, id, messageId);
    const options = {
      type: media.mimetype,
      ...(media.length !== null ? { length: media.length } : {}),
      ...(media.filename ? { disposition: `inline; filename*=UTF-8''${encodeURIComponent(media.filename)}` } : {}),
    };
    return Buffer.isBuffer(media.body) ? new StreamableFile(media.body, options) : new StreamableFile(media.body, options);
  }
}
