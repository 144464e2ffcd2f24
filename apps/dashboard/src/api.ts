import type { EventEnvelope } from '@app/contracts';
import { createApiClient, type paths, type Schemas } from '@app/api-client';

/**
 * The dashboard's calls, through the client generated from docs/openapi.json (libs/api-client): paths, bodies and
 * answers are the document's types, so a change of the API that the dashboard does not follow fails its typecheck.
 */
export type SessionView = Schemas['SessionResponse'];
export type MessageView = Schemas['MessageResponse'];
export type GroupView = Schemas['GroupResponse'];
export type WebhookView = Schemas['WebhookResponse'];
export type DeliveryView = Schemas['DeliveryResponse'];
export type DeliveryDetailView = Schemas['DeliveryDetailResponse'];
export type Me = Schemas['MeResponse'];
export type Gateway = Schemas['GatewayResponse'];
export type WebhookInput = Schemas['UpdateWebhookDto'];
export type ChatView = Schemas['ChatResponse'];
export type ContactDetail = Schemas['ContactDetailResponse'];
export type SendInput = Schemas['SendMessageDto'];
export type GroupDetails = Schemas['GroupDetailsResponse'];
export type GroupPatch = Schemas['UpdateGroupDto'];
export type StatusInput = Schemas['StatusPostDto'];
export type LabelView = Schemas['LabelResponse'];
export type SessionPatch = Schemas['UpdateSessionDto'];
export type Overview = Schemas['OverviewResponse'];
export type EventSinkView = Schemas['EventSinkResponse'];
export type EventSinkCreate = Schemas['CreateEventSinkDto'];
export type EventSinkPatch = Schemas['UpdateEventSinkDto'];
export type Organization = Schemas['OrganizationResponse'];
export type MemberView = Schemas['MemberResponse'];
export type InvitationView = Schemas['InvitationResponse'];
export type ApiKeyView = Schemas['ApiKeyResponse'];
export type ApiKeyCreate = Schemas['CreateApiKeyDto'];
export type AuditEntry = Schemas['AuditEntryResponse'];
export type AuditQuery = NonNullable<paths['/api/v1/audit-log']['get']['parameters']['query']>;
export type CampaignView = Schemas['CampaignResponse'];
export type CampaignCreate = Schemas['CreateCampaignDto'];
export type CampaignRecipientView = Schemas['CampaignRecipientResponse'];
export type ChatwootView = Schemas['ChatwootIntegrationResponse'];
export type ChatwootInput = Schemas['PutChatwootDto'];
export type { EventEnvelope };

export const API_BASE = '/api/v1';
const TOKEN_KEY = 'gw.token';

/** The login JWT or a pasted API key; per tab (sessionStorage), so closing the tab logs out. */
export const credentials = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** The API's `{error:{code,message,details}}` envelope as a thrown error. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The API's per-field validation messages (`details.fields`, a 422), empty for other errors. */
  fields(): Record<string, string[]> {
    return (this.details.fields as Record<string, string[]> | undefined) ?? {};
  }

  /** One readable line, per-field validation messages included. */
  describe(): string {
    const fields = this.details.fields as Record<string, string[]> | undefined;
    if (!fields) return this.message;
    return `${this.message}: ${Object.entries(fields).map(([f, msgs]) => `${f} ${msgs.join(', ')}`).join('; ')}`;
  }
}

let onUnauthorized: () => void = () => undefined;
/** What a 401 does (the app goes back to the login screen). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

const client = createApiClient(location.origin);
client.use({
  onRequest({ request }) {
    const token = credentials.get();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) {
      credentials.clear();
      onUnauthorized();
    }
    return response;
  },
});

/** The answer's data, or the error envelope thrown as an ApiError. */
async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    const err = (error as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined)?.error;
    throw new ApiError(response.status, err?.code ?? 'http_error', err?.message ?? `HTTP ${response.status}`, err?.details ?? {});
  }
  return data as T;
}

const session = (id: string) => ({ params: { path: { id } } });

export const api = {
  login: (email: string, password: string) => ok(client.POST('/api/v1/auth/login', { body: { email, password } })),
  me: () => ok(client.GET('/api/v1/auth/me')),

  sessions: () => ok(client.GET('/api/v1/sessions', { params: { query: { limit: 100 } } })),
  session: (id: string) => ok(client.GET('/api/v1/sessions/{id}', session(id))),
  createSession: (label: string) => ok(client.POST('/api/v1/sessions', { body: { label } })),
  sessionAction: (id: string, action: 'start' | 'stop' | 'restart' | 'logout') => ok(client.POST(`/api/v1/sessions/{id}:${action}`, session(id))),
  updateSession: (id: string, body: SessionPatch) => ok(client.PATCH('/api/v1/sessions/{id}', { ...session(id), body })),
  deleteSession: (id: string) => ok(client.DELETE('/api/v1/sessions/{id}', session(id))),
  qr: (id: string) => ok(client.GET('/api/v1/sessions/{id}/qr', session(id))),
  qrImage: (id: string) => ok(client.GET('/api/v1/sessions/{id}/qr', { ...session(id), headers: { Accept: 'image/png' }, parseAs: 'blob' })),
  requestCode: (id: string, phoneNumber: string) => ok(client.POST('/api/v1/sessions/{id}:request-code', { ...session(id), body: { phoneNumber } })),
  groups: (id: string) => ok(client.GET('/api/v1/sessions/{id}/groups', { params: { path: { id }, query: { limit: 100 } } })),
  createGroup: (id: string, name: string, participants: string[]) => ok(client.POST('/api/v1/sessions/{id}/groups', { ...session(id), body: { name, participants } })),
  messages: (id: string) => ok(client.GET('/api/v1/sessions/{id}/messages', { params: { path: { id }, query: { limit: 20 } } })),
  media: (id: string, messageId: string) =>
    ok(client.GET('/api/v1/sessions/{id}/messages/{messageId}/media', { params: { path: { id, messageId } }, parseAs: 'blob' })),
  sendText: (id: string, to: string, text: string) => ok(client.POST('/api/v1/sessions/{id}/messages', { ...session(id), body: { to, type: 'text', text } })),
  send: (id: string, body: SendInput) => ok(client.POST('/api/v1/sessions/{id}/messages', { ...session(id), body })),

  // the inbox (CONTRACT 12)
  chats: (id: string) => ok(client.GET('/api/v1/sessions/{id}/chats', { params: { path: { id }, query: { limit: 100 } } })),
  chatMessages: (id: string, jid: string) =>
    ok(client.GET('/api/v1/sessions/{id}/chats/{jid}/messages', { params: { path: { id, jid }, query: { limit: 50 } } })),
  readChat: (id: string, jid: string) => ok(client.POST('/api/v1/sessions/{id}/chats/{jid}:read', { params: { path: { id, jid } }, body: {} })),
  chatPresence: (id: string, jid: string, presence: 'composing' | 'recording' | 'paused') =>
    ok(client.POST('/api/v1/sessions/{id}/chats/{jid}/presence', { params: { path: { id, jid } }, body: { presence } })),
  contact: (id: string, jid: string) => ok(client.GET('/api/v1/sessions/{id}/contacts/{jid}', { params: { path: { id, jid } } })),
  block: (id: string, jid: string) => ok(client.POST('/api/v1/sessions/{id}/contacts/{jid}:block', { params: { path: { id, jid } } })),
  unblock: (id: string, jid: string) => ok(client.POST('/api/v1/sessions/{id}/contacts/{jid}:unblock', { params: { path: { id, jid } } })),

  // group administration and statuses (CONTRACT 13)
  group: (id: string, groupJid: string) => ok(client.GET('/api/v1/sessions/{id}/groups/{groupJid}', { params: { path: { id, groupJid } } })),
  updateGroup: (id: string, groupJid: string, body: GroupPatch) => ok(client.PATCH('/api/v1/sessions/{id}/groups/{groupJid}', { params: { path: { id, groupJid } }, body })),
  groupParticipants: (id: string, groupJid: string, action: 'add' | 'remove' | 'promote' | 'demote', participants: string[]) =>
    ok(client.POST('/api/v1/sessions/{id}/groups/{groupJid}/participants', { params: { path: { id, groupJid } }, body: { action, participants } })),
  groupInvite: (id: string, groupJid: string) => ok(client.GET('/api/v1/sessions/{id}/groups/{groupJid}/invite', { params: { path: { id, groupJid } } })),
  revokeGroupInvite: (id: string, groupJid: string) => ok(client.POST('/api/v1/sessions/{id}/groups/{groupJid}/invite:revoke', { params: { path: { id, groupJid } } })),
  labels: (id: string) => ok(client.GET('/api/v1/sessions/{id}/labels', session(id))),
  addChatLabel: (id: string, jid: string, labelId: string) => ok(client.POST('/api/v1/sessions/{id}/chats/{jid}/labels', { params: { path: { id, jid } }, body: { labelId } })),
  removeChatLabel: (id: string, jid: string, labelId: string) =>
    ok(client.DELETE('/api/v1/sessions/{id}/chats/{jid}/labels/{labelId}', { params: { path: { id, jid, labelId } } })),
  postStatus: (id: string, body: StatusInput) => ok(client.POST('/api/v1/sessions/{id}/status', { ...session(id), body })),

  webhooks: () => ok(client.GET('/api/v1/webhooks', { params: { query: { limit: 100 } } })),
  webhook: (id: string) => ok(client.GET('/api/v1/webhooks/{id}', session(id))),
  createWebhook: (input: WebhookInput) => ok(client.POST('/api/v1/webhooks', { body: { ...input, url: input.url ?? '' } })),
  updateWebhook: (id: string, input: WebhookInput) => ok(client.PATCH('/api/v1/webhooks/{id}', { ...session(id), body: input })),
  deleteWebhook: (id: string) => ok(client.DELETE('/api/v1/webhooks/{id}', session(id))),
  testWebhook: (id: string) => ok(client.POST('/api/v1/webhooks/{id}:test', session(id))),
  deliveries: (id: string) => ok(client.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: 100 } } })),
  delivery: (id: string, deliveryId: string) => ok(client.GET('/api/v1/webhooks/{id}/deliveries/{deliveryId}', { params: { path: { id, deliveryId } } })),
  replay: (id: string, deliveryId: string) => ok(client.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}:replay', { params: { path: { id, deliveryId } } })),

  // event sinks (CONTRACT 15): RabbitMQ and NATS JetStream, the same delivery log as webhooks
  eventSinks: () => ok(client.GET('/api/v1/event-sinks', { params: { query: { limit: 100 } } })),
  eventSink: (id: string) => ok(client.GET('/api/v1/event-sinks/{id}', session(id))),
  createEventSink: (body: EventSinkCreate) => ok(client.POST('/api/v1/event-sinks', { body })),
  updateEventSink: (id: string, body: EventSinkPatch) => ok(client.PATCH('/api/v1/event-sinks/{id}', { ...session(id), body })),
  deleteEventSink: (id: string) => ok(client.DELETE('/api/v1/event-sinks/{id}', session(id))),
  testEventSink: (id: string) => ok(client.POST('/api/v1/event-sinks/{id}:test', session(id))),
  sinkDeliveries: (id: string) => ok(client.GET('/api/v1/event-sinks/{id}/deliveries', { params: { path: { id }, query: { limit: 100 } } })),
  sinkDelivery: (id: string, deliveryId: string) => ok(client.GET('/api/v1/event-sinks/{id}/deliveries/{deliveryId}', { params: { path: { id, deliveryId } } })),
  replaySinkDelivery: (id: string, deliveryId: string) =>
    ok(client.POST('/api/v1/event-sinks/{id}/deliveries/{deliveryId}:replay', { params: { path: { id, deliveryId } } })),

  // the organization (CONTRACT 14)
  organization: () => ok(client.GET('/api/v1/organization')),
  renameOrganization: (name: string) => ok(client.PATCH('/api/v1/organization', { body: { name } })),
  members: () => ok(client.GET('/api/v1/members')),
  changeRole: (userId: string, role: MemberView['role']) => ok(client.PATCH('/api/v1/members/{userId}', { params: { path: { userId } }, body: { role } })),
  removeMember: (userId: string) => ok(client.DELETE('/api/v1/members/{userId}', { params: { path: { userId } } })),
  resetLink: (userId: string) => ok(client.POST('/api/v1/members/{userId}:reset-password', { params: { path: { userId } } })),
  invitations: () => ok(client.GET('/api/v1/invitations')),
  invite: (email: string, role: MemberView['role']) => ok(client.POST('/api/v1/invitations', { body: { email, role } })),
  withdrawInvitation: (id: string) => ok(client.DELETE('/api/v1/invitations/{id}', session(id))),
  acceptInvitation: (token: string, password: string, name?: string) =>
    ok(client.POST('/api/v1/auth/invitations:accept', { body: { token, password, ...(name ? { name } : {}) } })),
  changePassword: (currentPassword: string, newPassword: string) => ok(client.POST('/api/v1/auth/password', { body: { currentPassword, newPassword } })),
  resetPassword: (token: string, newPassword: string) => ok(client.POST('/api/v1/auth/password:reset', { body: { token, newPassword } })),
  apiKeys: () => ok(client.GET('/api/v1/api-keys')),
  createApiKey: (body: ApiKeyCreate) => ok(client.POST('/api/v1/api-keys', { body })),
  revokeApiKey: (id: string) => ok(client.DELETE('/api/v1/api-keys/{id}', session(id))),
  auditLog: (query: AuditQuery) => ok(client.GET('/api/v1/audit-log', { params: { query } })),

  // campaigns (CONTRACT 17)
  campaigns: (sessionId: string) => ok(client.GET('/api/v1/sessions/{id}/campaigns', { params: { path: { id: sessionId }, query: { limit: 100 } } })),
  campaign: (sessionId: string, campaignId: string) => ok(client.GET('/api/v1/sessions/{id}/campaigns/{campaignId}', { params: { path: { id: sessionId, campaignId } } })),
  createCampaign: (sessionId: string, body: CampaignCreate) => ok(client.POST('/api/v1/sessions/{id}/campaigns', { ...session(sessionId), body })),
  campaignAction: (sessionId: string, campaignId: string, action: 'pause' | 'resume' | 'cancel') =>
    ok(client.POST(`/api/v1/sessions/{id}/campaigns/{campaignId}:${action}`, { params: { path: { id: sessionId, campaignId } } })),
  campaignRecipients: (sessionId: string, campaignId: string, status?: CampaignRecipientView['status']) =>
    ok(client.GET('/api/v1/sessions/{id}/campaigns/{campaignId}/recipients', { params: { path: { id: sessionId, campaignId }, query: { limit: 100, ...(status ? { status } : {}) } } })),

  // a session's Chatwoot inbox (CONTRACT 16)
  chatwoot: (id: string) => ok(client.GET('/api/v1/sessions/{id}/integrations/chatwoot', session(id))),
  connectChatwoot: (id: string, body: ChatwootInput) => ok(client.PUT('/api/v1/sessions/{id}/integrations/chatwoot', { ...session(id), body })),
  disconnectChatwoot: (id: string) => ok(client.DELETE('/api/v1/sessions/{id}/integrations/chatwoot', session(id))),
  testChatwoot: (id: string) => ok(client.POST('/api/v1/sessions/{id}/integrations/chatwoot:test', session(id))),

  gateways: () => ok(client.GET('/api/v1/gateways')),
  overview: () => ok(client.GET('/api/v1/stats/overview')),
};
