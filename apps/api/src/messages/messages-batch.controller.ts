import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiBody, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { BATCH_MAX, SendBatchDto, SendBatchResponse } from './dto/send-batch.dto';
import { BatchResults, MessagesService } from './messages.service';

/** Bulk send (issue 24): `POST /sessions/{id}/messages:batch`, beside the single send of MessagesController. */
@ApiTags('messages')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'not_found')
@Controller('sessions')
export class MessagesBatchController {
  constructor(private readonly messages: MessagesService) {}

  /** The envelope and each message are validated by the service, after the session lookup (another organization's session is 404 first). */
  @Post(':id/messages\\:batch')
  @RequirePermissions('messages:send')
  @HttpCode(202)
  @ApiEndpoint(
    'Send messages in bulk',
    `1..${BATCH_MAX} messages of one session, each as in \`POST …/messages\` plus its own optional \`idempotencyKey\`. Answers 202 with one result per message, in order: the queued Message, or that message's own error (422, 404, 413, 429) without failing the others. Every new message counts against the session's ratePerMin and ratePerHour: the longest prefix the rates allow is accepted and the rest are 429 (with \`retryAfterSeconds\`). Accepted messages are sent in the batch's order. The request itself is 422 when the body is not \`{messages: [1..${BATCH_MAX}]}\`, 409 unless the session is working or reconnecting.`,
    'conflict',
    'validation_error',
  )
  @ApiOperation({ operationId: 'Messages_sendBatch' })
  @ApiBody({
    type: SendBatchDto,
    examples: {
      texts: {
        value: {
          messages: [
            { to: '15551234567', text: 'Hello 1', idempotencyKey: 'order-7-1' },
            { to: '15557654321', text: 'Hello 2', idempotencyKey: 'order-7-2' },
          ],
        },
      },
    },
  })
  @ApiAcceptedResponse({ type: SendBatchResponse, description: 'one result per message, in order' })
  sendBatch(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown): Promise<BatchResults> {
    return this.messages.sendBatch(p, id, body);
  }
}
