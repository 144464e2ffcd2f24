import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:audit-coverage-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import { buildOpenApiDocument, createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, startSimGateway } from './support/processes';
import { sessionProbes } from './support/session-probes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, asserted field by field
type Json = any;

/** What an audited operation writes: its action, its target's type and the path parameter naming the target (none: a create or the organization itself). */
type Audit = [action: string, targetType: string, targetParam?: string];

/**
 * CONTRACT 14: every state-changing call of the management surface is in the audit log. Each mutating operation of
 * the OpenAPI document is either here, with what its entry says, or in EXEMPT with the reason. The guard refuses a
 * caller without the right before anything else runs, so a refused call of each operation needs no fixtures.
 */
const AUDITED: Record<string, Audit> = {
  Organization_update: ['organization.update', 'organization'],
  Organization_changeRole: ['member.role', 'member', 'userId'],
  Organization_removeMember: ['member.remove', 'member', 'userId'],
  Organization_resetLink: ['member.reset-password', 'member', 'userId'],
  Organization_invite: ['invitation.create', 'invitation'],
  Organization_withdraw: ['invitation.withdraw', 'invitation', 'id'],
  Organization_createKey: ['apikey.create', 'apiKey'],
  Organization_updateKey: ['apikey.update', 'apiKey', 'id'],
  Organization_revokeKey: ['apikey.revoke', 'apiKey', 'id'],
  Webhooks_create: ['webhook.create', 'webhook'],
  Webhooks_update: ['webhook.update', 'webhook', 'id'],
  Webhooks_remove: ['webhook.delete', 'webhook', 'id'],
  Deliveries_replay: ['webhook.replay', 'delivery', 'deliveryId'],
  Deliveries_test: ['webhook.test', 'webhook', 'id'],
  EventSinks_create: ['event-sink.create', 'eventSink'],
  EventSinks_update: ['event-sink.update', 'eventSink', 'id'],
  EventSinks_remove: ['event-sink.delete', 'eventSink', 'id'],
  EventSinks_replay: ['event-sink.replay', 'delivery', 'deliveryId'],
  EventSinks_test: ['event-sink.test', 'eventSink', 'id'],
  Sessions_create: ['session.create', 'session'],
  Sessions_update: ['session.update', 'session', 'id'],
  Sessions_remove: ['session.delete', 'session', 'id'],
  Sessions_start: ['session.start', 'session', 'id'],
  Sessions_stop: ['session.stop', 'session', 'id'],
  Sessions_restart: ['session.restart', 'session', 'id'],
  Sessions_logout: ['session.logout', 'session', 'id'],
  Sessions_requestCode: ['session.request-code', 'session', 'id'],
  Sessions_createGroup: ['group.create', 'group'],
  Groups_update: ['group.update', 'group', 'groupJid'],
  Groups_participants: ['group.participants', 'group', 'groupJid'],
  Groups_leave: ['group.leave', 'group', 'groupJid'],
  Groups_revokeInvite: ['group.invite-revoke', 'group', 'groupJid'],
  Groups_join: ['group.join', 'group'],
  Groups_setPicture: ['group.picture', 'group', 'groupJid'],
  Contacts_block: ['contact.block', 'contact', 'jid'],
  Contacts_unblock: ['contact.unblock', 'contact', 'jid'],
  Profile_update: ['profile.update', 'session', 'id'],
  Profile_setPicture: ['profile.picture', 'session', 'id'],
  Profile_removePicture: ['profile.picture-remove', 'session', 'id'],
  AccountExtras_addLabel: ['chat.label-add', 'chat', 'jid'],
  AccountExtras_removeLabel: ['chat.label-remove', 'chat', 'jid'],
  AccountExtras_follow: ['channel.follow', 'channel'],
  AccountExtras_unfollow: ['channel.unfollow', 'channel', 'jid'],
  Campaigns_create: ['campaign.create', 'campaign'],
  Campaigns_pause: ['campaign.pause', 'campaign', 'campaignId'],
  Campaigns_resume: ['campaign.resume', 'campaign', 'campaignId'],
  Campaigns_cancel: ['campaign.cancel', 'campaign', 'campaignId'],
  Campaigns_removeOptOut: ['opt-out.remove', 'optOut', 'jid'],
  ChatwootIntegration_put: ['chatwoot.connect', 'session', 'id'],
  ChatwootIntegration_remove: ['chatwoot.disconnect', 'session', 'id'],
  ChatwootIntegration_test: ['chatwoot.test', 'session', 'id'],
};

/**
 * Audited, but open to any valid credential or to none, so no right can be lacking: their entries (success and
 * refusal) are asserted in test/organizations.e2e-spec.ts.
 */
const AUDITED_WITHOUT_RIGHT: Record<string, Audit> = {
  Account_change: ['auth.password', 'member'],
  Account_accept: ['invitation.accept', 'invitation'],
  Account_reset: ['auth.password-reset', 'member'],
};

/** Mutating operations outside the audit log, each with its reason (docs/security.md, "Audit log"). */
const EXEMPT: Record<string, string> = {
  Auth_login: 'a sign-in changes no setting; refused sign-ins are recorded as auth.login',
  Messages_send: 'messaging traffic: the message log records every message (CONTRACT 14: not each message sent)',
  Messages_sendBatch: 'messaging traffic, as Messages_send',
  MessageActions_edit: 'messaging traffic: an edit is a message',
  MessageActions_revoke: 'messaging traffic: a revoke is a message',
  MessageActions_forward: 'messaging traffic: a forward is a message',
  AccountExtras_postStatus: 'messaging traffic: a status is a message to the audience',
  Calls_reject: 'messaging traffic: answering a call',
  Chats_read: 'conversation state as a user keeps it on the phone (read marks), announced as chat events',
  Chats_archive: 'conversation state, as Chats_read',
  Chats_unarchive: 'conversation state, as Chats_read',
  Chats_pin: 'conversation state, as Chats_read',
  Chats_unpin: 'conversation state, as Chats_read',
  Chats_mute: 'conversation state, as Chats_read',
  Chats_unmute: 'conversation state, as Chats_read',
  Contacts_check: 'a lookup: changes nothing',
  Contacts_subscribe: 'presence: ephemeral, stores nothing',
  Contacts_chatPresence: 'presence: ephemeral, stores nothing',
  Contacts_accountPresence: 'presence: ephemeral, stores nothing',
  ChatwootWebhook_webhook: 'messaging traffic: an agent\'s reply sent from Chatwoot is a message (the message log records it); Chatwoot authenticates by the integration\'s secret, not as a member',
};

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);
/** A value for each path parameter: the guard refuses before anything is looked up, so none has to exist. */
const PARAMS: Record<string, string> = {
  id: 'tgt_audit_id',
  userId: 'usr_audit_target',
  groupJid: '120363000000000001@g.us',
  jid: '15550001111@s.whatsapp.net',
  campaignId: 'cmp_audit_target',
  deliveryId: 'dlv_audit_target',
  messageId: 'msg_audit_target',
  callId: 'call_audit_target',
  labelId: '7',
};

const OWN_PHONE = '15554000001';
const BEN = '15554000200';
const BEN_JID = `${BEN}@s.whatsapp.net`;

describe('audit coverage: every mutating operation is audited, or exempt with a reason (CONTRACT 14)', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let other: SeededOrg;
  let operations: Array<{ operationId: string; method: string; path: string }>;
  const gatewayId = `gw-audit-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const { post: simPostRaw } = simControl(() => simUrl);
  const probes = sessionProbes(api, () => org.adminKey);

  /** The organization's entries written by the request `requestId`, read through the API as its owner would. */
  const entriesOf = async (requestId: string, as = org): Promise<Json[]> => {
    const res = await api().get('/api/v1/audit-log?limit=100').set(bearer(as.users.owner.token));
    expect(res.status).toBe(200);
    return res.body.data.filter((e: Json) => e.requestId === requestId);
  };

  /** Calls `method path` as the admin key and returns the answer with the one success entry it wrote. */
  const audited = async (operationId: string, method: 'post' | 'patch' | 'put' | 'delete', path: string, body?: object): Promise<{ res: Json; entry: Json }> => {
    const call = api()[method](`/api/v1${path}`).set(bearer(org.adminKey));
    const res = body ? await call.send(body) : await call;
    if (res.status < 200 || res.status >= 300) throw new Error(`${operationId}: ${res.status} ${JSON.stringify(res.body)}`);
    const requestId = res.headers['x-request-id'];
    expect(requestId).toEqual(expect.any(String));
    const entries = await entriesOf(requestId);
    expect(entries).toHaveLength(1);
    const [action, targetType] = AUDITED[operationId];
    expect(entries[0]).toMatchObject({ action, outcome: 'success', target: { type: targetType }, actor: { type: 'apiKey', id: expect.any(String) } });
    expect(await entriesOf(requestId, other)).toEqual([]);
    return { res, entry: entries[0] };
  };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { sim: { SIM_QR_INTERVAL_MS: '60000' }, gateway: { RECONNECT_BASE_DELAY_MS: '100' } }));
    app = await createApiApp();
    await app.init();
    const doc = buildOpenApiDocument(app);
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops as Record<string, { operationId: string }>)
        .filter(([method]) => MUTATING.has(method))
        .map(([method, op]) => ({ operationId: op.operationId, method, path: path.replace(/^\/api\/v1/, '') })),
    );
    org = await seedOrganization('Audited');
    other = await seedOrganization('Audited stranger');
    const ben = await simPostRaw('/sim/contacts', { phoneNumber: BEN });
    expect(ben.status).toBe(200);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('knows every mutating operation of the OpenAPI document: each is audited or exempt with a reason, never both', () => {
    const listed = new Set([...Object.keys(AUDITED), ...Object.keys(AUDITED_WITHOUT_RIGHT), ...Object.keys(EXEMPT)]);
    const unlisted = operations.map((o) => o.operationId).filter((id) => !listed.has(id));
    expect(unlisted).toEqual([]);
    const known = new Set(operations.map((o) => o.operationId));
    expect([...listed].filter((id) => !known.has(id))).toEqual([]);
    expect(Object.keys(EXEMPT).filter((id) => id in AUDITED || id in AUDITED_WITHOUT_RIGHT)).toEqual([]);
  });

  it('records a refused call of every audited operation as exactly one denied entry: actor, action, target, organization', async () => {
    const reader = await org.apiKey(['sessions:read']);
    const missing: Json[] = [];
    for (const op of operations.filter((o) => o.operationId in AUDITED)) {
      const [action, targetType, targetParam] = AUDITED[op.operationId];
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(PARAMS[name]));
      const res = await (api() as Json)[op.method](`/api/v1${path}`).set(bearer(reader.token));
      expect({ op: op.operationId, status: res.status }).toEqual({ op: op.operationId, status: 403 });
      const entries = await entriesOf(res.headers['x-request-id']);
      const expected = { action, outcome: 'denied', actor: { type: 'apiKey', id: reader.id }, target: { type: targetType, id: targetParam ? PARAMS[targetParam] : null } };
      if (entries.length !== 1 || !matches(entries[0], expected)) missing.push({ op: op.operationId, expected, entries });
    }
    expect(missing).toEqual([]);
    // another organization never sees them
    const foreign = await api().get(`/api/v1/audit-log?actor=${reader.id}`).set(bearer(other.users.owner.token));
    expect(foreign.body.data).toEqual([]);
  });

  it('records each change of a session’s life, its settings, groups, contacts, profile, campaigns and sinks as one success entry', async () => {
    const created = await audited('Sessions_create', 'post', '/sessions', { label: 'audited' });
    const sessionId: string = created.res.body.id;
    expect(created.entry.target.id).toBe(sessionId);
    expect(created.entry.changes).toEqual(['label']);
    await probes.waitStatus(sessionId, 'scan_qr_code', 15000);
    expect((await simPostRaw(`/sim/sessions/${sessionId}/scan`, { phoneNumber: OWN_PHONE })).status).toBe(200);
    await probes.waitStatus(sessionId, 'working', 15000);
    const s = (rest: string) => `/sessions/${sessionId}${rest}`;

    const renamed = await audited('Sessions_update', 'patch', s(''), { label: 'audited (EU)', autoRead: true });
    expect(renamed.entry).toMatchObject({ target: { id: sessionId }, changes: ['autoRead', 'label'] });
    expect(JSON.stringify(renamed.entry)).not.toContain('audited (EU)');

    const group = await audited('Sessions_createGroup', 'post', s('/groups'), { name: 'Audited team', participants: [BEN_JID] });
    const groupJid: string = group.res.body.groupJid;
    expect(group.entry.target.id).toBe(groupJid);
    expect((await audited('Groups_update', 'patch', s(`/groups/${groupJid}`), { subject: 'Renamed' })).entry).toMatchObject({ target: { id: groupJid }, changes: ['subject'] });
    expect((await audited('Groups_participants', 'post', s(`/groups/${groupJid}/participants`), { action: 'remove', participants: [BEN_JID] })).entry.target.id).toBe(groupJid);

    expect((await audited('Contacts_block', 'post', s(`/contacts/${BEN_JID}:block`))).entry.target.id).toBe(BEN_JID);
    expect((await audited('Contacts_unblock', 'post', s(`/contacts/${BEN_JID}:unblock`))).entry.target.id).toBe(BEN_JID);
    expect((await audited('Profile_update', 'patch', s('/profile'), { name: 'Audited Inc' })).entry).toMatchObject({ target: { id: sessionId }, changes: ['name'] });

    const campaign = await audited('Campaigns_create', 'post', s('/campaigns'), { name: 'audited', message: { text: 'hello' }, recipients: [{ to: BEN }], startAt: Date.now() + 3_600_000 });
    const campaignId: string = campaign.res.body.id;
    expect(campaign.entry.target.id).toBe(campaignId);
    expect((await audited('Campaigns_cancel', 'post', s(`/campaigns/${campaignId}:cancel`))).entry.target.id).toBe(campaignId);

    const sink = await audited('EventSinks_create', 'post', '/event-sinks', { kind: 'amqp', url: 'amqp://audit:s3cret-pass@127.0.0.1:5672/', exchange: 'audited' });
    expect(sink.entry.target.id).toBe(sink.res.body.id);
    expect(JSON.stringify(sink.entry)).not.toContain('s3cret-pass');
    expect((await audited('EventSinks_update', 'patch', `/event-sinks/${sink.res.body.id}`, { active: false })).entry.changes).toEqual(['active']);
    expect((await audited('EventSinks_remove', 'delete', `/event-sinks/${sink.res.body.id}`)).entry.target.id).toBe(sink.res.body.id);

    // a change a gateway carries out is written ahead of it: an entry that cannot be written fails the request before
    // the gateway is asked (the session is still working the moment the 500 is answered; it was stopped before the
    // 500 when the entry was written on the reply)
    const db = await testDataSource();
    await db.query(`
      CREATE OR REPLACE FUNCTION refuse_audit_ahead() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$;
      CREATE TRIGGER refuse_audit_ahead BEFORE INSERT ON audit_log FOR EACH ROW WHEN (NEW.action = 'session.stop' AND NEW.target_id = '${sessionId}') EXECUTE FUNCTION refuse_audit_ahead();
    `);
    try {
      const unauditable = await api().post(`/api/v1${s(':stop')}`).set(bearer(org.adminKey));
      expect(unauditable.status).toBe(500);
      expect((await api().get(`/api/v1${s('')}`).set(bearer(org.adminKey))).body.status).toBe('working');
    } finally {
      await db.query('DROP TRIGGER refuse_audit_ahead ON audit_log; DROP FUNCTION refuse_audit_ahead();');
    }
    // the entry written ahead is settled by the answer: a refusal of the state is failed, one entry; a request that was
    // never attempted (invalid, or naming nothing) leaves none
    const refused = await api().post(`/api/v1${s(':request-code')}`).set(bearer(org.adminKey)).send({ phoneNumber: '15551234567' });
    expect(refused.status).toBe(409);
    expect(await entriesOf(refused.headers['x-request-id'])).toEqual([expect.objectContaining({ action: 'session.request-code', outcome: 'failed', target: { type: 'session', id: sessionId } })]);
    const invalid = await api().post(`/api/v1${s(':request-code')}`).set(bearer(org.adminKey)).send({ phoneNumber: 'not a number' });
    expect(invalid.status).toBe(422);
    const unknown = await api().post('/api/v1/sessions/ses_00000000000000000000000000:stop').set(bearer(org.adminKey));
    expect(unknown.status).toBe(404);
    for (const res of [invalid, unknown]) expect(await entriesOf(res.headers['x-request-id'])).toEqual([]);

    expect((await audited('Sessions_stop', 'post', s(':stop'))).entry.target.id).toBe(sessionId);
    await audited('Sessions_start', 'post', s(':start'));
    await probes.waitStatus(sessionId, 'working', 15000);
    await audited('Sessions_logout', 'post', s(':logout'));
    expect((await audited('Sessions_remove', 'delete', s(''))).entry.target.id).toBe(sessionId);
  }, 120000);
});

/** `entry` has every field of `expected` (nested objects compared field by field). */
function matches(entry: Json, expected: Json): boolean {
  return Object.entries(expected).every(([k, v]) => (v && typeof v === 'object' ? matches(entry?.[k], v) : entry?.[k] === v));
}
