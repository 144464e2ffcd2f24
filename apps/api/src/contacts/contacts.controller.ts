import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { ContactCheckView, ContactDetailView, ContactView, ProfileView } from '@app/contracts';
import { AuditedAhead } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { type Page, PageQueryDto } from '../common/pagination';
import { ContactsService } from './contacts.service';
import {
  AccountPresenceDto,
  ChatPresenceDto,
  CheckContactsDto,
  ContactCheckList,
  ContactDetailResponse,
  ContactPage,
  ContactViewResponse,
  ProfilePictureDto,
  ProfileResponse,
  UpdateProfileDto,
} from './dto/contact.dto';

const JID_FORMS = '`{jid}`: a phone number (digits are normalized) or a jid `…@s.whatsapp.net` / `…@lid`, as a send’s `to`.';
const NEEDS_NETWORK = '409 unless the session is `working`; 503 when its gateway is not available.';

/** Contacts and presence of a session (CONTRACT 12; docs/chats.md, "Contacts, profile and presence"). */
@ApiTags('contacts')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'not_found')
@Controller('sessions')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @Post(':id/contacts\\:check')
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint(
    'Check numbers on WhatsApp',
    `Asks the network which of 1..50 numbers are on WhatsApp; one answer per input, in order (\`jid\`/\`lid\` null when not). Numbers found are stored as contacts. ${NEEDS_NETWORK}`,
    'validation_error',
    'conflict',
    'gateway_unavailable',
  )
  @ApiBody({ type: CheckContactsDto, examples: { numbers: { value: { numbers: ['+1 555 123 4567', '4915112345678'] } } } })
  @ApiOkResponse({ type: ContactCheckList })
  check(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: CheckContactsDto): Promise<{ data: ContactCheckView[] }> {
    return this.contacts.check(p.organizationId, id, body);
  }

  @Get(':id/contacts')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List contacts', 'The contacts stored for the session (kept current from the network), paged by `cursor`.', 'validation_error')
  @ApiOkResponse({ type: ContactPage })
  list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: PageQueryDto): Promise<Page<ContactView>> {
    return this.contacts.list(p.organizationId, id, query);
  }

  @Get(':id/contacts/:jid')
  @RequirePermissions('sessions:read')
  @ApiEndpoint(
    'Get a contact',
    `One contact with its \`about\` and \`pictureUrl\` (null when hidden or none): asked of the network while the session is \`working\` (and stored), the stored values otherwise. 404 when the contact is neither stored nor on WhatsApp. ${JID_FORMS}`,
    'validation_error',
    'gateway_unavailable',
  )
  @ApiOkResponse({ type: ContactDetailResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ContactDetailView> {
    return this.contacts.get(p.organizationId, id, jid);
  }

  @Post(':id/contacts/:jid\\:block')
  @AuditedAhead('contact.block', 'contact', { targetParam: 'jid' })
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint('Block a contact', `Blocks the contact on WhatsApp; \`contact.blocked\` follows when it was not blocked. ${JID_FORMS} ${NEEDS_NETWORK}`, 'validation_error', 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ContactViewResponse })
  block(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ContactView> {
    return this.contacts.setBlocked(p.organizationId, id, jid, true);
  }

  @Post(':id/contacts/:jid\\:unblock')
  @AuditedAhead('contact.unblock', 'contact', { targetParam: 'jid' })
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint('Unblock a contact', `Unblocks the contact; \`contact.unblocked\` follows when it was blocked. ${JID_FORMS} ${NEEDS_NETWORK}`, 'validation_error', 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: ContactViewResponse })
  unblock(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<ContactView> {
    return this.contacts.setBlocked(p.organizationId, id, jid, false);
  }

  @Post(':id/contacts/:jid/presence\\:subscribe')
  @RequirePermissions('messages:send')
  @HttpCode(204)
  @ApiEndpoint(
    'Subscribe to a contact’s presence',
    `Asks the network for the contact’s presence: \`presence.update\` events follow (online, offline, typing…). ${JID_FORMS} ${NEEDS_NETWORK}`,
    'validation_error',
    'conflict',
    'gateway_unavailable',
  )
  @ApiNoContentResponse({ description: 'subscribed' })
  subscribe(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<void> {
    return this.contacts.subscribePresence(p.organizationId, id, jid);
  }

  @Post(':id/chats/:jid/presence')
  @RequirePermissions('messages:send')
  @HttpCode(204)
  @ApiEndpoint(
    'Show a presence to a chat',
    `\`composing\` (typing…), \`recording\` (recording audio…) or \`paused\`, shown to that chat (a contact or a group; \`{jid}\` as a send’s \`to\`). ${NEEDS_NETWORK}`,
    'validation_error',
    'conflict',
    'gateway_unavailable',
  )
  @ApiBody({ type: ChatPresenceDto, examples: { typing: { value: { presence: 'composing' } } } })
  @ApiNoContentResponse({ description: 'shown' })
  chatPresence(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string, @Body() body: ChatPresenceDto): Promise<void> {
    return this.contacts.chatPresence(p.organizationId, id, jid, body.presence);
  }

  @Post(':id/presence')
  @RequirePermissions('messages:send')
  @HttpCode(204)
  @ApiEndpoint(
    'Set the account’s presence',
    `\`available\` (online) or \`unavailable\` for the account’s contacts. On WhatsApp the account needs a profile name first (409 otherwise). ${NEEDS_NETWORK}`,
    'validation_error',
    'conflict',
    'gateway_unavailable',
  )
  @ApiBody({ type: AccountPresenceDto, examples: { online: { value: { presence: 'available' } } } })
  @ApiNoContentResponse({ description: 'set' })
  accountPresence(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: AccountPresenceDto): Promise<void> {
    return this.contacts.accountPresence(p.organizationId, id, body.presence);
  }
}

/** The account's own profile (CONTRACT 12): reads need `sessions:read`, writes `sessions:write`. */
@ApiTags('contacts')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'not_found', 'conflict', 'gateway_unavailable')
@Controller('sessions')
export class ProfileController {
  constructor(private readonly contacts: ContactsService) {}

  @Get(':id/profile')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('Get the profile', `The account’s own name, about text and picture URL, as the network has them. ${NEEDS_NETWORK}`)
  @ApiOkResponse({ type: ProfileResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<ProfileView> {
    return this.contacts.profile(p.organizationId, id);
  }

  @Patch(':id/profile')
  @AuditedAhead('profile.update', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint('Update the profile', `Changes the name contacts see and/or the about text (at least one). ${NEEDS_NETWORK}`, 'validation_error')
  @ApiBody({ type: UpdateProfileDto, examples: { both: { value: { name: 'Support desk', about: 'Replies within a day' } } } })
  @ApiOkResponse({ type: ProfileResponse })
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: UpdateProfileDto): Promise<ProfileView> {
    return this.contacts.updateProfile(p.organizationId, id, body);
  }

  @Put(':id/profile/picture')
  @AuditedAhead('profile.picture', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint(
    'Set the profile picture',
    `An image (image/jpeg, image/png or image/webp, at most 5 MiB) by URL (fetched through the SSRF guard) or base64 (within the request body limit), as a send’s media. ${NEEDS_NETWORK}`,
    'validation_error',
    'payload_too_large',
  )
  @ApiBody({ type: ProfilePictureDto, examples: { url: { value: { media: { url: 'https://example.com/logo.jpg', mimetype: 'image/jpeg' } } } } })
  @ApiOkResponse({ type: ProfileResponse })
  setPicture(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: ProfilePictureDto): Promise<ProfileView> {
    return this.contacts.setPicture(p.organizationId, id, body);
  }

  @Delete(':id/profile/picture')
  @AuditedAhead('profile.picture-remove', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint('Remove the profile picture', `The account shows no picture any more. ${NEEDS_NETWORK}`)
  @ApiOkResponse({ type: ProfileResponse })
  removePicture(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<ProfileView> {
    return this.contacts.removePicture(p.organizationId, id);
  }
}
