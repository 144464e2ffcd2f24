import { DataSource } from 'typeorm';
import type { Permission, Role } from '@app/contracts';
import { PERMISSIONS, ROLE_PERMISSIONS, ROLES } from '@app/contracts';
import { ApiKey, newId, Session, User, Webhook } from '@app/database';
import { buildOpenApiDocument } from '../apps/api/src/bootstrap';
import { signAccessToken } from '../apps/api/src/auth/access-token';
import { startApi } from './support/api-app';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, seedStoppedSession, testDataSource } from './support/seed';

/**
 * Every operation of the OpenAPI document, called as an attacker would: with another organization's ids, with each
 * bad credential and with each insufficient right. An operation the document has and this table lacks fails the
 * suite, so a route added later must say here what it requires.
 *
 * `permission`: what the route requires (`public`: nothing, `authenticated`: any valid credential).
 * `body`: a valid body, so that a cross-organization call gets past validation and meets the scoping.
 */
type Requirement = Permission | 'public' | 'authenticated';
interface Entry {
  permission: Requirement;
  body?: object;
}

const MATRIX: Record<string, Entry> = {
  Auth_login: { permission: 'public' },
  Health_healthz: { permission: 'public' },
  Health_readyz: { permission: 'public' },
  Auth_me: { permission: 'authenticated' },
  Webhooks_create: { permission: 'webhooks:manage', body: { url: 'https://example.com/matrix' } },
  Webhooks_list: { permission: 'webhooks:manage' },
  Webhooks_get: { permission: 'webhooks:manage' },
  Webhooks_update: { permission: 'webhooks:manage', body: { active: false } },
  Webhooks_remove: { permission: 'webhooks:manage' },
  Deliveries_list: { permission: 'webhooks:manage' },
  Deliveries_get: { permission: 'webhooks:manage' },
  Deliveries_replay: { permission: 'webhooks:manage' },
  Deliveries_test: { permission: 'webhooks:manage' },
  Sessions_create: { permission: 'sessions:write', body: { label: 'matrix' } },
  Sessions_list: { permission: 'sessions:read' },
  Sessions_get: { permission: 'sessions:read' },
  Sessions_update: { permission: 'sessions:write', body: { label: 'renamed' } },
  Sessions_remove: { permission: 'sessions:write' },
  Sessions_start: { permission: 'sessions:write' },
  Sessions_stop: { permission: 'sessions:write' },
  Sessions_restart: { permission: 'sessions:write' },
  Sessions_logout: { permission: 'sessions:write' },
  Sessions_requestCode: { permission: 'sessions:write', body: { phoneNumber: '15551234567' } },
  // a QR pairs the organization's number to whoever scans it: write, not read
  Sessions_qr: { permission: 'sessions:write' },
  Sessions_groups: { permission: 'sessions:read' },
  Sessions_createGroup: { permission: 'groups:write', body: { name: 'matrix group', participants: [] } },
  Groups_get: { permission: 'sessions:read' },
  Groups_update: { permission: 'groups:write', body: { subject: 'matrix' } },
  Groups_participants: { permission: 'groups:write', body: { action: 'add', participants: ['15551234567@s.whatsapp.net'] } },
  Groups_leave: { permission: 'groups:write' },
  // an invite code lets anyone join: handing it out is a group write
  Groups_invite: { permission: 'groups:write' },
  Groups_revokeInvite: { permission: 'groups:write' },
  Groups_join: { permission: 'groups:write', body: { code: 'AbC123' } },
  Groups_setPicture: { permission: 'groups:write', body: { media: { base64: 'AAAA', mimetype: 'image/png' } } },
  // a tenant sees the gateways of its own sessions; the fleet-wide view needs platform:operate (test/gateways.e2e-spec.ts)
  Gateways_list: { permission: 'sessions:read' },
  Messages_send: { permission: 'messages:send', body: { to: '15551234567', text: 'hello' } },
  Messages_list: { permission: 'sessions:read' },
  Messages_get: { permission: 'sessions:read' },
  Messages_media: { permission: 'sessions:read' },
  Contacts_check: { permission: 'messages:send', body: { numbers: ['15551234567'] } },
  Contacts_list: { permission: 'sessions:read' },
  Contacts_get: { permission: 'sessions:read' },
  Contacts_block: { permission: 'messages:send' },
  Contacts_unblock: { permission: 'messages:send' },
  Contacts_subscribe: { permission: 'messages:send' },
  Contacts_chatPresence: { permission: 'messages:send', body: { presence: 'composing' } },
  Contacts_accountPresence: { permission: 'messages:send', body: { presence: 'available' } },
  Profile_get: { permission: 'sessions:read' },
  Profile_update: { permission: 'sessions:write', body: { name: 'matrix' } },
  Profile_setPicture: { permission: 'sessions:write', body: { media: { base64: 'AAAA', mimetype: 'image/png' } } },
  Profile_removePicture: { permission: 'sessions:write' },
  Chats_list: { permission: 'sessions:read' },
  Chats_messages: { permission: 'sessions:read' },
  Chats_read: { permission: 'messages:send', body: {} },
  Chats_archive: { permission: 'messages:send' },
  Chats_unarchive: { permission: 'messages:send' },
  Chats_pin: { permission: 'messages:send' },
  Chats_unpin: { permission: 'messages:send' },
  Chats_mute: { permission: 'messages:send', body: { until: Date.UTC(2100, 0, 1) } },
  Chats_unmute: { permission: 'messages:send' },
  MessageActions_edit: { permission: 'messages:send', body: { text: 'edited' } },
  MessageActions_revoke: { permission: 'messages:send' },
  MessageActions_forward: { permission: 'messages:send', body: { to: '15551234567' } },
  Calls_reject: { permission: 'messages:send' },
  AccountExtras_labels: { permission: 'sessions:read' },
  AccountExtras_addLabel: { permission: 'messages:send', body: { labelId: '1' } },
  AccountExtras_removeLabel: { permission: 'messages:send' },
  AccountExtras_postStatus: { permission: 'messages:send', body: { text: 'matrix', audience: ['15551234567@s.whatsapp.net'] } },
  AccountExtras_channels: { permission: 'sessions:read' },
  AccountExtras_follow: { permission: 'messages:send', body: { invite: 'AAAAAAAAAAAAAAAAAAAAAA' } },
  AccountExtras_unfollow: { permission: 'messages:send' },
  AccountExtras_channelMessages: { permission: 'sessions:read' },
  Messages_sendBatch: { permission: 'messages:send', body: { messages: [{ to: '15551234567', text: 'hello' }] } },
  // CONTRACT 14: the organization, its members, invitations, keys and audit log
  Organization_get: { permission: 'authenticated' },
  Organization_update: { permission: 'members:manage', body: { name: 'Caller' } },
  Organization_listMembers: { permission: 'members:manage' },
  Organization_changeRole: { permission: 'members:manage', body: { role: 'viewer' } },
  Organization_removeMember: { permission: 'members:manage' },
  Organization_resetLink: { permission: 'members:manage' },
  Organization_invite: { permission: 'members:manage', body: { email: 'matrix@example.test', role: 'viewer' } },
  Organization_listInvitations: { permission: 'members:manage' },
  Organization_withdraw: { permission: 'members:manage' },
  Organization_listKeys: { permission: 'apikeys:manage' },
  Organization_createKey: { permission: 'apikeys:manage', body: { name: 'matrix', permissions: ['sessions:read'] } },
  Organization_updateKey: { permission: 'apikeys:manage', body: { name: 'matrix' } },
  Organization_revokeKey: { permission: 'apikeys:manage' },
  AuditLog_list: { permission: 'audit:read' },
  Account_accept: { permission: 'public' },
  Account_reset: { permission: 'public' },
  Account_change: { permission: 'authenticated', body: { currentPassword: 'wrong-password', newPassword: 'a-new-password' } },
  // CONTRACT 15: event sinks are destinations beside webhooks, under the same right
  EventSinks_create: { permission: 'webhooks:manage', body: { kind: 'amqp', url: 'amqp://matrix:secret@rabbitmq.example.com/', exchange: 'matrix' } },
  EventSinks_list: { permission: 'webhooks:manage' },
  EventSinks_get: { permission: 'webhooks:manage' },
  EventSinks_update: { permission: 'webhooks:manage', body: { active: false } },
  EventSinks_remove: { permission: 'webhooks:manage' },
  EventSinks_listDeliveries: { permission: 'webhooks:manage' },
  EventSinks_getDelivery: { permission: 'webhooks:manage' },
  EventSinks_replay: { permission: 'webhooks:manage' },
  EventSinks_test: { permission: 'webhooks:manage' },
  ChatwootIntegration_put: { permission: 'webhooks:manage', body: { baseUrl: 'https://chatwoot.example.com', accountId: 1, apiAccessToken: 'matrix-token', inboxId: 1 } },
  ChatwootIntegration_get: { permission: 'webhooks:manage' },
  ChatwootIntegration_remove: { permission: 'webhooks:manage' },
  ChatwootIntegration_test: { permission: 'webhooks:manage' },
  // authenticated by the integration's secret (401 without it), not by a credential of ours
  ChatwootWebhook_webhook: { permission: 'public' },
  // CONTRACT 17: a campaign sends messages; reading one is reading the session
  Campaigns_create: { permission: 'messages:send', body: { name: 'matrix', message: { text: 'hello' }, recipients: [{ to: '15551234567' }] } },
  Campaigns_list: { permission: 'sessions:read' },
  Campaigns_get: { permission: 'sessions:read' },
  Campaigns_recipients: { permission: 'sessions:read' },
  Campaigns_pause: { permission: 'messages:send' },
  Campaigns_resume: { permission: 'messages:send' },
  Campaigns_cancel: { permission: 'messages:send' },
  Campaigns_optOuts: { permission: 'sessions:read' },
  Campaigns_removeOptOut: { permission: 'messages:send' },
  // the dashboard's Overview: its delivery parts are null without webhooks:manage
  Stats_overview: { permission: 'sessions:read' },
};

interface Operation {
  id: string;
  method: 'get' | 'post' | 'patch' | 'delete' | 'put';
  path: string;
}

describe('authorization matrix over the OpenAPI document (issue 12 item 8)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let db: DataSource;
  let caller: SeededOrg;
  let victim: SeededOrg;
  let operations: Operation[];
  const victimIds: Record<string, string> = {};
  const badCredentials: Array<[string, Record<string, string>]> = [];

  beforeAll(async () => {
    api = await startApi();
    db = await testDataSource();
    caller = await seedOrganization('Caller');
    victim = await seedOrganization('Victim');
    const doc = buildOpenApiDocument(api.app);
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      (['get', 'post', 'patch', 'delete', 'put'] as const).filter((m) => item[m]).map((method) => ({ id: item[method]!.operationId!, method, path })),
    );

    const session = await seedStoppedSession(victim.id, 'victim session');
    const webhook = await api.http().post('/api/v1/webhooks').set(bearer(victim.adminKey)).send({ url: 'https://example.com/victim' }).expect(201);
    victimIds.session = session.id;
    victimIds.webhook = webhook.body.id;
    victimIds.sink = (
      await api.http().post('/api/v1/event-sinks').set(bearer(victim.adminKey)).send({ kind: 'amqp', url: 'amqp://victim:secret@rabbitmq.example.com/', exchange: 'victim' }).expect(201)
    ).body.id;
    victimIds.apiKey = (await victim.apiKey(['sessions:read'])).id;
    victimIds.invitation = (await api.http().post('/api/v1/invitations').set(bearer(victim.users.owner.token)).send({ email: 'invited@victim.test', role: 'viewer' }).expect(201)).body.id;
    victimIds.member = victim.users.viewer.id;

    const revoked = await caller.apiKey(['*']);
    await db.getRepository(ApiKey).update({ id: revoked.id }, { revokedAt: new Date() });
    const departed = await seedOrganization('Departed');
    const gone = departed.users.owner;
    await db.getRepository(User).update({ id: gone.id }, { deletedAt: new Date() });
    badCredentials.push(
      ['no credential', {}],
      ['a malformed header', { Authorization: 'Bearer' }],
      ['a token that is neither a key nor a JWT', bearer('not-a-token')],
      ['a JWT signed with another secret', bearer(signAccessToken({ sub: caller.users.owner.id, org: caller.id, role: 'owner' }, 'x'.repeat(48), 3600))],
      ['a revoked API key', bearer(revoked.token)],
      ['a deleted user’s JWT', bearer(gone.token)],
    );
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  /** The victim's resource an `{id}` names, by the collection it is in. */
  const idOf = (path: string) =>
    path.startsWith('/api/v1/webhooks') ? victimIds.webhook : path.startsWith('/api/v1/event-sinks') ? victimIds.sink : path.startsWith('/api/v1/api-keys') ? victimIds.apiKey : path.startsWith('/api/v1/invitations') ? victimIds.invitation : victimIds.session;

  /** The path with every parameter filled: `{id}` and `{userId}` are the victim's, other ids are made up. */
  const fill = (op: Operation, sessionId?: string) =>
    op.path
      .replace('{id}', sessionId ?? idOf(op.path))
      .replace('{userId}', victimIds.member)
      .replace(/\{(\w+)\}/g, (_m, name: string) => `${name}-${newId('msg')}`);

  const call = (op: Operation, headers: Record<string, string>, sessionId?: string) => {
    const req = api.http()[op.method](fill(op, sessionId)).set(headers);
    const body = MATRIX[op.id]?.body;
    return body ? req.send(body) : req;
  };

  /** What the victim organization holds, to prove a refused call changed nothing. */
  const victimState = async () => ({
    sessions: await db.getRepository(Session).find({ where: { organizationId: victim.id }, order: { id: 'ASC' } }),
    webhooks: await db.getRepository(Webhook).find({ where: { organizationId: victim.id }, order: { id: 'ASC' } }),
    keys: await db.getRepository(ApiKey).find({ where: { organizationId: victim.id }, order: { id: 'ASC' } }),
    users: await db.getRepository(User).find({ where: { organizationId: victim.id }, order: { id: 'ASC' } }),
    invitations: await db.query('SELECT * FROM invitations WHERE organization_id = $1 ORDER BY id', [victim.id]),
  });

  it('has an entry for every operation of the document, and no stale one', () => {
    const inDocument = operations.map((o) => o.id).sort();
    expect(inDocument.filter((id) => !MATRIX[id])).toEqual([]);
    expect(Object.keys(MATRIX).filter((id) => !inDocument.includes(id))).toEqual([]);
  });

  it('answers every bad credential with 401 in the envelope on every non-public operation', async () => {
    const failures: string[] = [];
    for (const op of operations.filter((o) => MATRIX[o.id].permission !== 'public')) {
      for (const [what, headers] of badCredentials) {
        const res = await call(op, headers);
        if (res.status !== 401 || res.body?.error?.code !== 'unauthorized') failures.push(`${op.id} with ${what}: ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers 403 to a key with every permission but the required one, and to a role that lacks it', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      const required = MATRIX[op.id].permission;
      if (required === 'public' || required === 'authenticated') continue;
      const key = await caller.apiKey(PERMISSIONS.filter((p) => p !== required));
      const roles = ROLES.filter((r) => !roleGrants(r, required));
      for (const [who, token] of [['a key without it', key.token], ...roles.map((r) => [r, caller.users[r].token])]) {
        const res = await call(op, bearer(token));
        if (res.status !== 403 || res.body?.error?.code !== 'forbidden') failures.push(`${op.id} as ${who}: ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers 404 to every operation on another organization’s ids, and changes nothing of theirs', async () => {
    const before = await victimState();
    const failures: string[] = [];
    for (const op of operations.filter((o) => o.path.includes('{id}') || o.path.includes('{userId}'))) {
      const res = await call(op, bearer(caller.adminKey));
      if (res.status !== 404 || res.body?.error?.code !== 'not_found') failures.push(`${op.id}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(failures).toEqual([]);
    expect(await victimState()).toEqual(before);
  });

  it('lets every role and an unscoped key past the permission check of what it holds (neither 401 nor 403)', async () => {
    const failures: string[] = [];
    const unscoped = await caller.apiKey(['*']);
    for (const op of operations.filter((o) => o.path.includes('{id}') || o.path.includes('{userId}'))) {
      const required = MATRIX[op.id].permission;
      if (required === 'public') continue;
      const holders: Array<[string, string]> = [
        ...ROLES.filter((r) => required === 'authenticated' || roleGrants(r, required)).map((r): [string, string] => [r, caller.users[r].token]),
        ['an unscoped key with *', unscoped.token],
      ];
      for (const [who, token] of holders) {
        const res = await call(op, bearer(token));
        if (res.status === 401 || res.status === 403) failures.push(`${op.id} as ${who}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers 404 to a session-scoped key on every operation of another session of its own organization, and 403 to creating one', async () => {
    const mine = await seedStoppedSession(caller.id, 'scoped');
    const elsewhere = await seedStoppedSession(caller.id, 'not in scope');
    const scoped = await caller.apiKey(['*']);
    await db.getRepository(ApiKey).update({ id: scoped.id }, { sessionIds: [mine.id] });
    const failures: string[] = [];
    for (const op of operations.filter((o) => o.path.startsWith('/api/v1/sessions/{id}'))) {
      const res = await call(op, bearer(scoped.token), elsewhere.id);
      if (res.status !== 404 || res.body?.error?.code !== 'not_found') failures.push(`${op.id}: ${res.status}`);
    }
    expect(failures).toEqual([]);
    await api.http().post('/api/v1/sessions').set(bearer(scoped.token)).send({ label: 'more' }).expect(403);
    const listed = await api.http().get('/api/v1/sessions').set(bearer(scoped.token)).expect(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
  });

  it('lists only the caller’s own rows', async () => {
    for (const path of ['/api/v1/sessions', '/api/v1/webhooks', '/api/v1/members', '/api/v1/invitations', '/api/v1/api-keys', '/api/v1/organization']) {
      const res = await api.http().get(path).set(bearer(caller.adminKey)).expect(200);
      const text = JSON.stringify(res.body);
      for (const id of [victim.id, ...Object.values(victimIds)]) expect(text).not.toContain(id);
    }
    // the caller's log names the victim's ids it tried (its own refused attempts), never an entry of the victim's
    const log = await api.http().get('/api/v1/audit-log?limit=100').set(bearer(caller.adminKey)).expect(200);
    const victimActors = [...Object.values(victim.users).map((u) => u.id), victimIds.apiKey];
    expect(log.body.data.filter((e: { actor: { id: string } }) => victimActors.includes(e.actor.id))).toEqual([]);
    // the victim's own setup writes only: the caller's 404s reached none of its rows
    const victimLog = await api.http().get('/api/v1/audit-log?limit=100').set(bearer(victim.adminKey)).expect(200);
    expect(victimLog.body.data.map((e: { action: string; outcome: string }) => `${e.action}:${e.outcome}`)).toEqual(['invitation.create:success', 'event-sink.create:success', 'webhook.create:success']);
  });
});

function roleGrants(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}
