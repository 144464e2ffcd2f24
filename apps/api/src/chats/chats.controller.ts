import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiParam, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { ChatView, MessageView } from '@app/contracts';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import type { Page } from '../common/pagination';
import { MessagePage } from '../messages/dto/message.dto';
import { ChatsService } from './chats.service';
import { ChatMessagesQueryDto, ChatPage, ChatQueryDto, ChatResponse, MuteChatDto, ReadChatDto } from './dto/chat.dto';

const JID_PARAM = { name: 'jid', description: 'the chat: a JID (`…@s.whatsapp.net`, `…@lid`, `…@g.us`) or bare digits', example: '15551234567@s.whatsapp.net' };
const NEEDS_NETWORK = 'Done on the network first (409 unless the session is `working`); the chat, and a `chat.update` when it changed.';

@ApiTags('chats')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'not_found', 'validation_error')
@Controller('sessions/:id/chats')
export class ChatsController {
  constructor(private readonly chats: ChatsService) {}

  @Get()
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List chats', "The session's chats, most recent first: unread count, archived, pinned, muted and the last message.")
  @ApiOkResponse({ type: ChatPage, description: 'most recent first' })
  list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: ChatQueryDto): Promise<Page<ChatView>> {
    return this.chats.list(p.organizationId, id, query);
  }

  @Get(':jid/messages')
  @RequirePermissions('sessions:read')
  @ApiParam(JID_PARAM)
  @ApiEndpoint("List a chat's messages", "The chat's messages from the message log, newest first (as `GET …/messages?chatJid=`).")
  @ApiOkResponse({ type: MessagePage, description: 'newest first' })
  messages(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string, @Query() query: ChatMessagesQueryDto): Promise<Page<MessageView>> {
    return this.chats.messagesOf(p.organizationId, id, jid, query);
  }

  @Post(':jid\\:read')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiParam(JID_PARAM)
  @ApiEndpoint('Mark a chat read', `Read receipts for its received messages up to \`messageId\` (default: the newest) and the account's read mark, as WhatsApp Web does; its unread count is then 0. ${NEEDS_NETWORK}`, 'conflict', 'gateway_unavailable')
  @ApiBody({ type: ReadChatDto, required: false, examples: { newest: { value: {} }, upTo: { value: { messageId: 'msg_01JD8Y4ZK3V9W6T2M0QX7R5B1C' } } } })
  @ApiOkResponse({ type: ChatResponse })
  read(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string, @Body() body: ReadChatDto): Promise<ChatView> {
    return this.chats.read(p.organizationId, id, jid, body ?? {});
  }

  @Post(':jid\\:archive')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiParam(JID_PARAM)
  @ApiEndpoint('Archive a chat', NEEDS_NETWORK, 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ChatResponse })
  archive(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ChatView> {
    return this.chats.mark(p.organizationId, id, jid, { kind: 'archive', archived: true });
  }

  @Post(':jid\\:unarchive')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiParam(JID_PARAM)
  @ApiEndpoint('Unarchive a chat', NEEDS_NETWORK, 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ChatResponse })
  unarchive(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ChatView> {
    return this.chats.mark(p.organizationId, id, jid, { kind: 'archive', archived: false });
  }

  @Post(':jid\\:pin')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiParam(JID_PARAM)
  @ApiEndpoint('Pin a chat', NEEDS_NETWORK, 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ChatResponse })
  pin(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ChatView> {
    return this.chats.mark(p.organizationId, id, jid, { kind: 'pin', pinned: true });
  }

  @Post(':jid\\:unpin')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiParam(JID_PARAM)
  @ApiEndpoint('Unpin a chat', NEEDS_NETWORK, 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ChatResponse })
  unpin(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ChatView> {
    return this.chats.mark(p.organizationId, id, jid, { kind: 'pin', pinned: false });
  }

  @Post(':jid\\:mute')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiParam(JID_PARAM)
  @ApiEndpoint('Mute a chat', `Notifications muted until \`until\` (epoch ms, in the future). ${NEEDS_NETWORK}`, 'conflict', 'gateway_unavailable')
  @ApiBody({ type: MuteChatDto, examples: { week: { value: { until: 4102444800000 } } } })
  @ApiOkResponse({ type: ChatResponse })
  mute(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string, @Body() body: MuteChatDto): Promise<ChatView> {
    return this.chats.mute(p.organizationId, id, jid, body);
  }

  @Post(':jid\\:unmute')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiParam(JID_PARAM)
  @ApiEndpoint('Unmute a chat', NEEDS_NETWORK, 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ChatResponse })
  unmute(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ChatView> {
    return this.chats.mark(p.organizationId, id, jid, { kind: 'mute', until: null });
  }
}
