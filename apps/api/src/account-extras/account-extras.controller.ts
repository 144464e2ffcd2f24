import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiBody, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { ChannelMessageView, ChannelView, ChatLabelsView, LabelView, MessageView } from '@app/contracts';
import { AuditedAhead } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { MessageResponse } from '../messages/dto/message.dto';
import { AccountExtrasService } from './account-extras.service';
import {
  AddChatLabelDto,
  ChannelList,
  ChannelMessageList,
  ChannelMessagesQueryDto,
  ChannelResponse,
  ChatLabelsResponse,
  FollowChannelDto,
  LabelList,
  StatusPostDto,
} from './dto/account-extras.dto';

/** Labels, statuses and channels of a session's account (CONTRACT 13; docs/labels-status-channels.md). */
@ApiTags('labels, status and channels')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'not_found', 'validation_error')
@Controller('sessions/:id')
export class AccountExtrasController {
  constructor(private readonly extras: AccountExtrasService) {}

  @Get('labels')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List labels', "The account's WhatsApp Business labels, fresh from the network. 409 for a non-business account, or unless the session is working.", 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: LabelList })
  labels(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<{ data: LabelView[] }> {
    return this.extras.labels(p.organizationId, id);
  }

  @Post('chats/:jid/labels')
  @AuditedAhead('chat.label-add', 'chat', { targetParam: 'jid' })
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint('Add a label to a chat', 'The chat with its labels; `label.update` (`assigned`) follows from the network. 404 for an unknown label; 409 for a non-business account.', 'conflict', 'gateway_unavailable')
  @ApiBody({ type: AddChatLabelDto, examples: { label: { value: { labelId: '1' } } } })
  @ApiOkResponse({ type: ChatLabelsResponse })
  addLabel(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string, @Body() body: AddChatLabelDto): Promise<ChatLabelsView> {
    return this.extras.addChatLabel(p.organizationId, id, jid, body.labelId);
  }

  @Delete('chats/:jid/labels/:labelId')
  @AuditedAhead('chat.label-remove', 'chat', { targetParam: 'jid' })
  @RequirePermissions('messages:send')
  @ApiEndpoint('Remove a label from a chat', 'The chat with its labels; `label.update` (`unassigned`) follows when it carried the label. 409 for a non-business account.', 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ChatLabelsResponse })
  removeLabel(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string, @Param('labelId') labelId: string): Promise<ChatLabelsView> {
    return this.extras.removeChatLabel(p.organizationId, id, jid, labelId);
  }

  /** The body is validated by the service, after the session lookup: another organization's session is 404 first. */
  @Post('status')
  @RequirePermissions('messages:send')
  @HttpCode(202)
  @ApiEndpoint(
    'Post a status',
    'A status (story) to `audience` (default: all contacts, the people of the session’s 1:1 chats). A send: a Message with `chatJid: "status@broadcast"`, queued (202) and sent in order, counted against the session’s rates (429), with `message.sent` / `message.failed` as events.',
    'conflict',
  )
  @ApiBody({ type: StatusPostDto, examples: { text: { value: { type: 'text', text: 'Open until 8 pm today', backgroundColor: '#1f6feb', audience: ['15551234567@s.whatsapp.net'] } } } })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]{1,255}$' },
    description: '1..255 printable ASCII; a repeat within 24 h returns the first message',
  })
  @ApiAcceptedResponse({ type: MessageResponse, description: 'queued; the session posts it' })
  postStatus(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
  ): Promise<MessageView> {
    return this.extras.postStatus(p, id, body, idempotencyKey);
  }

  @Get('channels')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List followed channels', 'The channels (newsletters) the account follows, from the network.', 'conflict', 'gateway_unavailable', 'not_implemented')
  @ApiOkResponse({ type: ChannelList })
  channels(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<{ data: ChannelView[] }> {
    return this.extras.channels(p.organizationId, id);
  }

  @Post('channels\\:follow')
  @AuditedAhead('channel.follow', 'channel', { targetField: 'jid' })
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint('Follow a channel', 'Follows the channel of an invite (code or link); its posts then arrive as `channel.message`. 404 for an unknown invite.', 'conflict', 'gateway_unavailable')
  @ApiBody({ type: FollowChannelDto, examples: { link: { value: { invite: 'https://whatsapp.com/channel/0029VaF4k3Inv1t3' } } } })
  @ApiOkResponse({ type: ChannelResponse })
  follow(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: FollowChannelDto): Promise<ChannelView> {
    return this.extras.follow(p.organizationId, id, body.invite);
  }

  @Post('channels/:jid\\:unfollow')
  @AuditedAhead('channel.unfollow', 'channel', { targetParam: 'jid' })
  @RequirePermissions('messages:send')
  @HttpCode(204)
  @ApiEndpoint('Unfollow a channel', '404 when the account does not follow it.', 'conflict', 'gateway_unavailable')
  @ApiNoContentResponse({ description: 'unfollowed' })
  async unfollow(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<void> {
    await this.extras.unfollow(p.organizationId, id, jid);
  }

  @Get('channels/:jid/messages')
  @RequirePermissions('sessions:read')
  @ApiEndpoint("List a channel's posts", 'The newest `count` posts of the channel, newest first, from the network.', 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ChannelMessageList })
  channelMessages(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string, @Query() query: ChannelMessagesQueryDto): Promise<{ data: ChannelMessageView[] }> {
    return this.extras.channelMessages(p.organizationId, id, jid, query);
  }
}
