import { Body, Controller, Delete, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { MessageView } from '@app/contracts';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { EditMessageDto, ForwardMessageDto } from './dto/message-actions.dto';
import { MessageResponse } from './dto/message.dto';
import { MessageActionsService } from './message-actions.service';

/** CONTRACT 12's message actions: edit, delete for everyone, forward. Bodies are validated by the service, after the lookups. */
@ApiTags('messages')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'not_found', 'conflict')
@Controller('sessions/:id/messages')
export class MessageActionsController {
  constructor(private readonly actions: MessageActionsService) {}

  @Patch(':messageId')
  @RequirePermissions('messages:send')
  @ApiEndpoint(
    'Edit a sent message',
    "Replaces the text (or caption) of a message the session sent, on the network and in the log; `message.edited` follows. 409 for a message received, not sent yet, deleted, without text, or past WhatsApp's 15-minute edit window, and unless the session is working; 503 when its gateway is gone.",
    'validation_error',
    'gateway_unavailable',
  )
  @ApiBody({ type: EditMessageDto, examples: { fix: { value: { text: 'See you at 5 pm (not 4)' } } } })
  @ApiOkResponse({ type: MessageResponse, description: 'the message after the edit' })
  edit(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('messageId') messageId: string, @Body() body: unknown): Promise<MessageView> {
    return this.actions.edit(p.organizationId, id, messageId, body);
  }

  @Delete(':messageId')
  @RequirePermissions('messages:send')
  @HttpCode(204)
  @ApiEndpoint(
    'Delete a sent message for everyone',
    'Deletes a message the session sent for everyone in the chat; the log keeps it, marked, and `message.revoked` follows. A message already deleted answers 204 again. 409 for a message received or not sent yet, and unless the session is working; 503 when its gateway is gone.',
    'gateway_unavailable',
  )
  @ApiNoContentResponse({ description: 'deleted for everyone' })
  async revoke(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('messageId') messageId: string): Promise<void> {
    await this.actions.revoke(p.organizationId, id, messageId);
  }

  @Post(':messageId\\:forward')
  @RequirePermissions('messages:send')
  @HttpCode(202)
  @ApiEndpoint(
    'Forward a message',
    "A new outbound message with the original's content, marked forwarded on WhatsApp: accepted as a send is (202 `queued`, counted against the session's rates: 429), then `message.sent`. 409 for a deleted, unsent or unforwardable original (reactions, polls, votes) and unless the session is working or reconnecting.",
    'validation_error',
    'rate_limited',
  )
  @ApiBody({ type: ForwardMessageDto, examples: { contact: { value: { to: '15557654321' } } } })
  @ApiAcceptedResponse({ type: MessageResponse, description: 'queued; the session sends it' })
  forward(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('messageId') messageId: string, @Body() body: unknown): Promise<MessageView> {
    return this.actions.forward(p.organizationId, id, messageId, body);
  }
}

/** CONTRACT 13: a ringing call rejected. */
@ApiTags('calls')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'not_found', 'conflict')
@Controller('sessions/:id/calls')
export class CallsController {
  constructor(private readonly actions: MessageActionsService) {}

  @Post(':callId\\:reject')
  @RequirePermissions('messages:send')
  @HttpCode(204)
  @ApiEndpoint(
    'Reject a ringing call',
    'Rejects an incoming call that is ringing on the session (its id from `call.incoming`). 404 for a call the session does not know; 409 when it no longer rings or the session is not working; 503 when its gateway is gone.',
    'validation_error',
    'gateway_unavailable',
  )
  @ApiNoContentResponse({ description: 'rejected' })
  async reject(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('callId') callId: string): Promise<void> {
    await this.actions.rejectCall(p.organizationId, id, callId);
  }
}
