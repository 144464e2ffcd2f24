import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (runs may overlap), inherited by the gateway and dispatcher it spawns
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:client-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import Ajv2020 from 'ajv/dist/2020';
import yaml from 'js-yaml';
import { createApiClient, type ApiClient } from '@app/api-client';
import { EVENT_TYPES } from '@app/contracts';
import { startApi } from './support/api-app';
import { committedDocumentValidator } from './support/openapi-response-validator';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { simControl } from './support/sim-control';

const ROOT = join(__dirname, '..');

/**
 * The typed client generated from docs/openapi.json (libs/api-client: openapi-typescript + openapi-fetch) drives
 * every operation of the document against the real API, gateway (network simulator) and dispatcher, the way an
 * outside integrator would (issue 22 item 2). Every answer is also checked against the document, and every frame
 * of the WebSocket against docs/asyncapi.yaml.
 */
describe('the generated API client, through every operation', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let sim: AppProcess;
  let gateway: AppProcess;
  let dispatcher: AppProcess;
  let receiver: Receiver;
  let simUrl: string;
  let baseUrl: string;
  let org: SeededOrg;
  let client: ApiClient;
  let socket: WebSocket;
  const frames: Array<Record<string, unknown>> = [];
  const mismatches: string[] = [];
  const called = new Set<string>();
  const network = () => simControl(() => simUrl);

  /** fetch, with each answer checked against the document and each operation counted. */
  const checkedFetch = async (input: Request): Promise<Response> => {
    const res = await fetch(input);
    const url = new URL(input.url);
    const text = await res.clone().arrayBuffer();
    const contentType = res.headers.get('content-type') ?? undefined;
    const body = /json/.test(contentType ?? '') && text.byteLength ? JSON.parse(Buffer.from(text).toString('utf8')) : undefined;
    mismatches.push(...committedDocumentValidator().check(input.method, url.pathname, res.status, contentType, body, text.byteLength));
    called.add(committedDocumentValidator().operationOf(input.method, url.pathname) ?? `${input.method} ${url.pathname}`);
    return res;
  };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(`gw-client-${process.pid}`, { sim: { SIM_QR_INTERVAL_MS: '60000' } }));
    [dispatcher, receiver] = await Promise.all([startDispatcherProcess(), startReceiver()]);
    api = await startApi({ NETWORK_SIM_URL: simUrl });
    await api.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}`;
    org = await seedOrganization('Client Co');
  });
  afterAll(async () => {
    socket?.terminate();
    await api?.app.close();
    await Promise.all([gateway?.stop(), dispatcher?.stop(), receiver?.close()]);
    await sim?.stop();
    await closeTestDataSource();
  });

  it('has generated types equal to what openapi-typescript makes of the committed document (`npm run openapi`)', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'api-client-')), 'openapi.ts');
    execFileSync(join(ROOT, 'node_modules/.bin/openapi-typescript'), ['docs/openapi.json', '-o', out], { cwd: ROOT, stdio: 'pipe' });
    expect(readFileSync(join(ROOT, 'libs/api-client/src/openapi.ts'), 'utf8')).toBe(readFileSync(out, 'utf8'));
  });

  it('logs in, manages sessions, messages, groups and webhooks, and reads the fleet, all through the typed client', async () => {
    const owner = org.users.owner;
    const anonymous = createApiClient(baseUrl, { fetch: checkedFetch });
    expect((await anonymous.GET('/healthz')).data).toEqual({ status: 'ok' });
    expect((await anonymous.GET('/readyz')).data).toMatchObject({ status: 'ready', checks: { postgres: true, redis: true } });
    const refused = await anonymous.POST('/api/v1/auth/login', { body: { email: owner.email, password: 'wrong password' } });
    expect(refused.error?.error.code).toBe('unauthorized');
    const login = await anonymous.POST('/api/v1/auth/login', { body: { email: owner.email, password: owner.password } });
    expect(login.data?.tokenType).toBe('Bearer');
    client = createApiClient(baseUrl, { fetch: checkedFetch, headers: { Authorization: `Bearer ${login.data!.accessToken}` } });
    expect((await client.GET('/api/v1/auth/me')).data).toMatchObject({ kind: 'user', organizationId: org.id, role: 'owner' });

    // the socket from the start, so the session's whole life is seen as frames
    socket = new WebSocket(`${baseUrl.replace('http', 'ws')}/api/v1/ws?token=${login.data!.accessToken}`);
    socket.on('message', (data) => frames.push(JSON.parse(data.toString()) as Record<string, unknown>));
    await new Promise<void>((resolve, reject) => {
      socket.once('message', () => resolve());
      socket.once('error', reject);
    });

    // a session, paired by QR (the simulator scans it), then settings and a pairing code for a second one
    const created = await client.POST('/api/v1/sessions', { body: { label: 'Typed', ratePerMin: 1000, ratePerHour: 10000 } });
    expect(created.response.status).toBe(201);
    const id = created.data!.id;
    const path = { id };
    const statusOf = async () => (await client.GET('/api/v1/sessions/{id}', { params: { path } })).data!.status;
    await waitFor(async () => ((await statusOf()) === 'scan_qr_code' ? true : null), 10000, 'scan_qr_code');
    const qr = await client.GET('/api/v1/sessions/{id}/qr', { params: { path } });
    expect(typeof qr.data === 'object' && typeof qr.data.qr === 'string').toBe(true);
    const png = await client.GET('/api/v1/sessions/{id}/qr', { params: { path }, headers: { Accept: 'image/png' }, parseAs: 'arrayBuffer' });
    expect(png.response.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(png.data as unknown as ArrayBuffer).subarray(1, 4).toString()).toBe('PNG');
    expect((await network().post(`/sim/sessions/${id}/scan`, { phoneNumber: '15550003333', isBusiness: true })).status).toBe(200);
    await waitFor(async () => ((await statusOf()) === 'working' ? true : null), 10000, 'working');
    // a second session, to be paired by code instead (it stays waiting; deleted at the end)
    const second = (await client.POST('/api/v1/sessions', { body: { label: 'By code' } })).data!;
    await waitFor(async () => ((await client.GET('/api/v1/sessions/{id}', { params: { path: { id: second.id } } })).data!.status === 'scan_qr_code' ? true : null), 10000, 'second scan_qr_code');
    const code = await client.POST('/api/v1/sessions/{id}:request-code', { params: { path: { id: second.id } }, body: { phoneNumber: '15550004444' } });
    expect(code.data?.code).toMatch(/^\w{4,}/);
    const listed = await client.GET('/api/v1/sessions', { params: { query: { limit: 10 } } });
    expect(listed.data?.data.map((s) => s.id).sort()).toEqual([id, second.id].sort());
    const patched = await client.PATCH('/api/v1/sessions/{id}', { params: { path }, body: { label: 'Typed (renamed)', autoRead: false } });
    expect(patched.data).toMatchObject({ label: 'Typed (renamed)', autoRead: false, ratePerMin: 1000 });

    // groups
    const group = await client.POST('/api/v1/sessions/{id}/groups', { params: { path }, body: { name: 'Typed team', participants: ['15550005555@s.whatsapp.net'] } });
    expect(group.response.status).toBe(201);
    const groups = await client.GET('/api/v1/sessions/{id}/groups', { params: { path, query: { limit: 100 } } });
    expect(groups.data?.data.map((g) => g.groupJid)).toContain(group.data!.groupJid);
    // group administration (docs/groups.md): the creator is the admin of its group
    const gPath = { id, groupJid: group.data!.groupJid };
    const fresh = await client.GET('/api/v1/sessions/{id}/groups/{groupJid}', { params: { path: gPath } });
    expect(fresh.data?.participantList[0]).toEqual({ jid: '15550003333@s.whatsapp.net', isAdmin: true, isSuperAdmin: true });
    expect((await client.PATCH('/api/v1/sessions/{id}/groups/{groupJid}', { params: { path: gPath }, body: { subject: 'Typed team (renamed)' } })).data?.subject).toBe('Typed team (renamed)');
    const members = await client.POST('/api/v1/sessions/{id}/groups/{groupJid}/participants', { params: { path: gPath }, body: { action: 'add', participants: ['15550005555@s.whatsapp.net'] } });
    expect(members.data?.data).toEqual([{ jid: '15550005555@s.whatsapp.net', status: 'already' }]);
    const invite = await client.GET('/api/v1/sessions/{id}/groups/{groupJid}/invite', { params: { path: gPath } });
    const renewed = await client.POST('/api/v1/sessions/{id}/groups/{groupJid}/invite:revoke', { params: { path: gPath } });
    expect(renewed.data?.code).not.toBe(invite.data?.code);
    const groupPicture = await client.PUT('/api/v1/sessions/{id}/groups/{groupJid}/picture', {
      params: { path: gPath },
      body: { media: { base64: Buffer.from('a picture').toString('base64'), mimetype: 'image/png' } },
    });
    expect(groupPicture.response.status).toBe(204);
    // joining a group one is in changes nothing and answers the group
    expect((await client.POST('/api/v1/sessions/{id}/groups:join', { params: { path }, body: { code: renewed.data!.code } })).data?.groupJid).toBe(gPath.groupJid);
    expect((await client.POST('/api/v1/sessions/{id}/groups/{groupJid}:leave', { params: { path: gPath } })).response.status).toBe(204);

    // labels (a business account), a status post, channels (CONTRACT 13)
    const labels = await client.GET('/api/v1/sessions/{id}/labels', { params: { path } });
    expect(labels.data?.data[0]).toEqual({ id: '1', name: 'New customer', color: 0 });
    const labelledChat = { id, jid: '15550006666@s.whatsapp.net' };
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}/labels', { params: { path: labelledChat }, body: { labelId: '1' } })).data?.labels.map((l) => l.id)).toEqual(['1']);
    expect((await client.DELETE('/api/v1/sessions/{id}/chats/{jid}/labels/{labelId}', { params: { path: { ...labelledChat, labelId: '1' } } })).data?.labels).toEqual([]);
    const story = await client.POST('/api/v1/sessions/{id}/status', { params: { path }, body: { text: 'typed story', audience: ['15550006666'] } });
    expect(story.data?.chatJid).toBe('status@broadcast');
    const channel = (await (await network().post('/sim/channels', { name: 'Typed channel' })).json()) as { jid: string; invite: string };
    expect((await client.POST('/api/v1/sessions/{id}/channels:follow', { params: { path }, body: { invite: channel.invite } })).data?.jid).toBe(channel.jid);
    expect((await client.GET('/api/v1/sessions/{id}/channels', { params: { path } })).data?.data.map((c) => c.jid)).toEqual([channel.jid]);
    await network().post(`/sim/channels/${channel.jid}/posts`, { text: 'typed post' });
    const channelPath = { id, jid: channel.jid };
    expect((await client.GET('/api/v1/sessions/{id}/channels/{jid}/messages', { params: { path: channelPath, query: { count: 5 } } })).data?.data.map((m) => m.text)).toEqual(['typed post']);
    expect((await client.POST('/api/v1/sessions/{id}/channels/{jid}:unfollow', { params: { path: channelPath } })).response.status).toBe(204);

    // messages: a text sent, an image received, its media downloaded with the stored type
    const sent = await client.POST('/api/v1/sessions/{id}/messages', { params: { path, header: { 'Idempotency-Key': 'typed-1' } }, body: { to: '15550006666', text: 'hello' } });
    expect(sent.response.status).toBe(202);
    const messageId = sent.data!.id;
    await waitFor(async () => {
      const got = await client.GET('/api/v1/sessions/{id}/messages/{messageId}', { params: { path: { id, messageId } } });
      return got.data?.status === 'sent' ? true : null;
    }, 10000, 'sent');
    // bulk send: one result per message, in order; a repeated key answers the first message
    const bulk = await client.POST('/api/v1/sessions/{id}/messages:batch', {
      params: { path },
      body: { messages: [{ to: '15550006666', text: 'bulk 1', idempotencyKey: 'typed-1' }, { to: '15550006666', text: 'bulk 2' }] },
    });
    expect(bulk.response.status).toBe(202);
    expect(bulk.data?.results.map((r) => r.status)).toEqual([202, 202]);
    expect(bulk.data?.results[0].message?.id).toBe(messageId);
    const image = Buffer.from('not really a jpeg, but bytes with a type');
    await network().post(`/sim/sessions/${id}/inbound`, { from: '15550007777', type: 'image', text: 'look', media: { base64: image.toString('base64'), mimetype: 'image/jpeg' } });
    const inbound = await waitFor(async () => {
      const page = await client.GET('/api/v1/sessions/{id}/messages', { params: { path, query: { direction: 'in', limit: 5 } } });
      return page.data?.data.find((m) => m.type === 'image') ?? null;
    }, 10000, 'the inbound image');
    expect(inbound.media).toMatchObject({ mimetype: 'image/jpeg', size: image.length });
    const media = await client.GET('/api/v1/sessions/{id}/messages/{messageId}/media', { params: { path: { id, messageId: inbound.id } }, parseAs: 'arrayBuffer' });
    expect(media.response.headers.get('content-type')).toMatch(/^image\/jpeg/);
    expect(Buffer.from(media.data as unknown as ArrayBuffer)).toEqual(image);
    // message actions (CONTRACT 12): the sent text edited, forwarded, then deleted for everyone; a ringing call rejected
    const messagePath = { id, messageId };
    expect((await client.PATCH('/api/v1/sessions/{id}/messages/{messageId}', { params: { path: messagePath }, body: { text: 'hello again' } })).data?.text).toBe('hello again');
    const forwarded = await client.POST('/api/v1/sessions/{id}/messages/{messageId}:forward', { params: { path: messagePath }, body: { to: '15550008888' } });
    expect(forwarded.response.status).toBe(202);
    expect((await client.DELETE('/api/v1/sessions/{id}/messages/{messageId}', { params: { path: messagePath } })).response.status).toBe(204);
    const { callId } = (await (await network().post(`/sim/sessions/${id}/call`, { from: '15550007777' })).json()) as { callId: string };
    expect((await client.POST('/api/v1/sessions/{id}/calls/{callId}:reject', { params: { path: { id, callId } } })).response.status).toBe(204);

    // chats: the inbound image's chat (autoRead is off: unread), its messages, and every mark
    const chatPath = { id, jid: '15550007777@s.whatsapp.net' };
    const chatList = await client.GET('/api/v1/sessions/{id}/chats', { params: { path, query: { limit: 10 } } });
    expect(chatList.data?.data.find((c) => c.jid === chatPath.jid)).toMatchObject({ unreadCount: 1, lastMessage: { id: inbound.id } });
    expect((await client.GET('/api/v1/sessions/{id}/chats/{jid}/messages', { params: { path: chatPath, query: { limit: 5 } } })).data?.data.map((m) => m.id)).toEqual([inbound.id]);
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}:read', { params: { path: chatPath }, body: { messageId: inbound.id } })).data?.unreadCount).toBe(0);
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}:archive', { params: { path: chatPath } })).data?.archived).toBe(true);
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}:unarchive', { params: { path: chatPath } })).data?.archived).toBe(false);
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}:pin', { params: { path: chatPath } })).data?.pinned).toBe(true);
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}:unpin', { params: { path: chatPath } })).data?.pinned).toBe(false);
    const until = Date.now() + 3600_000;
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}:mute', { params: { path: chatPath }, body: { until } })).data?.mutedUntil).toBe(until);
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}:unmute', { params: { path: chatPath } })).data?.mutedUntil).toBeNull();

    // webhooks: create, read, change, test-fire, the delivery log, replay, delete
    const hook = await client.POST('/api/v1/webhooks', { body: { url: `${receiver.url}/typed`, events: ['webhook.test'], retryPolicy: { attempts: 1 }, secret: 'typed-secret' } });
    expect(hook.response.status).toBe(201);
    const hookPath = { id: hook.data!.id };
    expect((await client.GET('/api/v1/webhooks', { params: { query: { limit: 100 } } })).data?.data.map((w) => w.id)).toContain(hook.data!.id);
    expect((await client.GET('/api/v1/webhooks/{id}', { params: { path: hookPath } })).data?.retryPolicy).toEqual({ policy: 'exponential', delaySeconds: 2, attempts: 1 });
    expect((await client.PATCH('/api/v1/webhooks/{id}', { params: { path: hookPath }, body: { customHeaders: { 'X-Typed': 'yes' } } })).data?.customHeaders).toEqual({ 'X-Typed': 'yes' });
    const fired = await client.POST('/api/v1/webhooks/{id}:test', { params: { path: hookPath } });
    expect(fired.response.status).toBe(202);
    const deliveryId = fired.data!.deliveryId!;
    const delivered = await waitFor(async () => {
      const got = await client.GET('/api/v1/webhooks/{id}/deliveries/{deliveryId}', { params: { path: { ...hookPath, deliveryId } } });
      return got.data?.status === 'delivered' ? got.data : null;
    }, 15000, 'the test delivery');
    expect(delivered.attemptList[0]).toMatchObject({ attemptNo: 1, statusCode: 200 });
    const log = await client.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: hookPath, query: { status: 'delivered' } } });
    expect(log.data?.data.map((d) => d.id)).toEqual([deliveryId]);
    const replayed = await client.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}:replay', { params: { path: { ...hookPath, deliveryId } } });
    expect(replayed.response.status).toBe(202);
    await waitFor(() => (receiver.at('/typed').length >= 2 ? true : null), 15000, 'the replay');
    expect((await client.DELETE('/api/v1/webhooks/{id}', { params: { path: hookPath } })).response.status).toBe(204);

    // contacts, profile and presence (CONTRACT 12): an account on the network, checked, looked at, blocked and unblocked
    expect((await network().post('/sim/contacts', { phoneNumber: '15550008888', name: 'Typed contact' })).status).toBe(200);
    const checked = await client.POST('/api/v1/sessions/{id}/contacts:check', { params: { path }, body: { numbers: ['15550008888'] } });
    expect(checked.data?.data[0]).toMatchObject({ exists: true, jid: '15550008888@s.whatsapp.net' });
    const contactPath = { id, jid: '15550008888@s.whatsapp.net' };
    expect((await client.GET('/api/v1/sessions/{id}/contacts', { params: { path, query: { limit: 100 } } })).data?.data.map((c) => c.jid)).toContain(contactPath.jid);
    expect((await client.GET('/api/v1/sessions/{id}/contacts/{jid}', { params: { path: contactPath } })).data?.jid).toBe(contactPath.jid);
    expect((await client.POST('/api/v1/sessions/{id}/contacts/{jid}:block', { params: { path: contactPath } })).data?.blocked).toBe(true);
    expect((await client.POST('/api/v1/sessions/{id}/contacts/{jid}:unblock', { params: { path: contactPath } })).data?.blocked).toBe(false);
    expect((await client.POST('/api/v1/sessions/{id}/contacts/{jid}/presence:subscribe', { params: { path: contactPath } })).response.status).toBe(204);
    expect((await client.POST('/api/v1/sessions/{id}/chats/{jid}/presence', { params: { path: contactPath }, body: { presence: 'composing' } })).response.status).toBe(204);
    expect((await client.POST('/api/v1/sessions/{id}/presence', { params: { path }, body: { presence: 'available' } })).response.status).toBe(204);
    expect((await client.PATCH('/api/v1/sessions/{id}/profile', { params: { path }, body: { name: 'Typed' } })).data?.name).toBe('Typed');
    const picture = await client.PUT('/api/v1/sessions/{id}/profile/picture', { params: { path }, body: { media: { base64: image.toString('base64'), mimetype: 'image/jpeg' } } });
    expect(picture.data?.pictureUrl).toEqual(expect.any(String));
    expect((await client.GET('/api/v1/sessions/{id}/profile', { params: { path } })).data?.name).toBe('Typed');
    expect((await client.DELETE('/api/v1/sessions/{id}/profile/picture', { params: { path } })).data?.pictureUrl).toBeNull();

    // the fleet as a tenant sees it
    expect((await client.GET('/api/v1/gateways')).data?.data.map((g) => g.id)).toEqual([`gw-client-${process.pid}`]);

    // CONTRACT 15: an event sink beside the webhooks (its broker is never reached here: a name that does not resolve)
    const sink = await client.POST('/api/v1/event-sinks', { body: { kind: 'amqp', url: 'amqp://typed:secret@rabbitmq.example.com/', exchange: 'typed' } });
    expect(sink.response.status).toBe(201);
    const sinkPath = { id: sink.data!.id };
    expect((await client.GET('/api/v1/event-sinks')).data?.data.map((x) => x.id)).toContain(sinkPath.id);
    expect((await client.GET('/api/v1/event-sinks/{id}', { params: { path: sinkPath } })).data?.id).toBe(sinkPath.id);
    expect((await client.PATCH('/api/v1/event-sinks/{id}', { params: { path: sinkPath }, body: { events: ['message.received'] } })).data?.events).toEqual(['message.received']);
    const sinkTest = await client.POST('/api/v1/event-sinks/{id}:test', { params: { path: sinkPath } });
    expect(sinkTest.response.status).toBe(202);
    const sinkDeliveryId = sinkTest.data!.deliveryId!;
    expect((await client.GET('/api/v1/event-sinks/{id}/deliveries', { params: { path: sinkPath } })).data?.data.map((d) => d.id)).toContain(sinkDeliveryId);
    expect((await client.GET('/api/v1/event-sinks/{id}/deliveries/{deliveryId}', { params: { path: { ...sinkPath, deliveryId: sinkDeliveryId } } })).data?.id).toBe(sinkDeliveryId);
    // still being tried (202) or already given up on (409 only while in progress): both are in the document
    expect([202, 409]).toContain((await client.POST('/api/v1/event-sinks/{id}/deliveries/{deliveryId}:replay', { params: { path: { ...sinkPath, deliveryId: sinkDeliveryId } } })).response.status);
    expect((await client.DELETE('/api/v1/event-sinks/{id}', { params: { path: sinkPath } })).response.status).toBe(204);

    // CONTRACT 16: the session's Chatwoot inbox (never reached here: a name that does not resolve), and its webhook
    const chatwoot = await client.PUT('/api/v1/sessions/{id}/integrations/chatwoot', {
      params: { path },
      body: { baseUrl: 'https://chatwoot.example.com', accountId: 1, apiAccessToken: 'typed-chatwoot-token', inboxId: 4 },
    });
    expect(chatwoot.response.status).toBe(200);
    expect(chatwoot.data?.webhookUrl).toEqual(expect.any(String));
    expect((await client.GET('/api/v1/sessions/{id}/integrations/chatwoot', { params: { path } })).data?.id).toBe(chatwoot.data!.id);
    expect((await client.POST('/api/v1/sessions/{id}/integrations/chatwoot:test', { params: { path } })).response.status).toBe(202);
    const unsigned = await anonymous.POST('/api/v1/integrations/chatwoot/{integrationId}/webhook', {
      params: { path: { integrationId: chatwoot.data!.id } },
      body: { event: 'message_created', id: 1, content: 'no secret', message_type: 'outgoing', private: false },
    });
    expect(unsigned.response.status).toBe(401);
    expect((await client.DELETE('/api/v1/sessions/{id}/integrations/chatwoot', { params: { path } })).response.status).toBe(204);

    // CONTRACT 17: a paced campaign, paused, resumed and cancelled; the opt-out list
    const campaign = await client.POST('/api/v1/sessions/{id}/campaigns', {
      params: { path },
      body: { name: 'typed', message: { text: 'Hi {{name}}' }, recipients: [{ to: '15550008888', variables: { name: 'Typed' } }, { to: '15550008889', variables: { name: 'Other' } }], pacing: { minDelayMs: 60000, maxDelayMs: 60000, typing: false }, skipNotOnWhatsApp: false },
    });
    expect(campaign.response.status).toBe(201);
    const campaignPath = { id, campaignId: campaign.data!.id };
    expect((await client.GET('/api/v1/sessions/{id}/campaigns', { params: { path } })).data?.data.map((c) => c.id)).toContain(campaignPath.campaignId);
    expect((await client.GET('/api/v1/sessions/{id}/campaigns/{campaignId}', { params: { path: campaignPath } })).data?.counts.total).toBe(2);
    expect((await client.GET('/api/v1/sessions/{id}/campaigns/{campaignId}/recipients', { params: { path: campaignPath } })).data?.data).toHaveLength(2);
    expect((await client.POST('/api/v1/sessions/{id}/campaigns/{campaignId}:pause', { params: { path: campaignPath } })).data?.status).toBe('paused');
    expect((await client.POST('/api/v1/sessions/{id}/campaigns/{campaignId}:resume', { params: { path: campaignPath } })).response.status).toBe(200);
    expect((await client.POST('/api/v1/sessions/{id}/campaigns/{campaignId}:cancel', { params: { path: campaignPath } })).data?.status).toBe('cancelled');
    expect((await client.GET('/api/v1/sessions/{id}/opt-outs', { params: { path } })).data?.data).toEqual([]);
    expect((await client.DELETE('/api/v1/sessions/{id}/opt-outs/{jid}', { params: { path: { id, jid: '15550008888@s.whatsapp.net' } } })).response.status).toBe(404);

    // CONTRACT 14: the organization runs itself (the owner's own password is left alone: changing it ends this login)
    expect((await client.GET('/api/v1/organization')).data?.id).toBe(org.id);
    expect((await client.PATCH('/api/v1/organization', { body: { name: 'Client Co' } })).data?.name).toBe('Client Co');
    expect((await client.GET('/api/v1/members')).data?.data.map((m) => m.id)).toContain(owner.id);
    const invitation = await client.POST('/api/v1/invitations', { body: { email: 'typed-invitee@example.test', role: 'viewer' } });
    expect(invitation.response.status).toBe(201);
    expect((await client.GET('/api/v1/invitations')).data?.data.map((i) => i.id)).toContain(invitation.data!.id);
    const withdrawn = await client.POST('/api/v1/invitations', { body: { email: 'typed-withdrawn@example.test', role: 'viewer' } });
    expect((await client.DELETE('/api/v1/invitations/{id}', { params: { path: { id: withdrawn.data!.id } } })).response.status).toBe(204);
    const joined = await anonymous.POST('/api/v1/auth/invitations:accept', { body: { token: invitation.data!.token, password: 'a typed passphrase', name: 'Typed Invitee' } });
    expect(joined.response.status).toBe(200);
    const invitee = createApiClient(baseUrl, { fetch: checkedFetch, headers: { Authorization: `Bearer ${joined.data!.accessToken}` } });
    const memberId = (await invitee.GET('/api/v1/auth/me')).data!.id;
    expect((await client.PATCH('/api/v1/members/{userId}', { params: { path: { userId: memberId } }, body: { role: 'member' } })).data?.role).toBe('member');
    const reset = await client.POST('/api/v1/members/{userId}:reset-password', { params: { path: { userId: memberId } } });
    expect(reset.response.status).toBe(201);
    expect((await anonymous.POST('/api/v1/auth/password:reset', { body: { token: reset.data!.token, newPassword: 'a second typed passphrase' } })).response.status).toBe(204);
    const relogin = await anonymous.POST('/api/v1/auth/login', { body: { email: 'typed-invitee@example.test', password: 'a second typed passphrase' } });
    const reloggedIn = createApiClient(baseUrl, { fetch: checkedFetch, headers: { Authorization: `Bearer ${relogin.data!.accessToken}` } });
    expect((await reloggedIn.POST('/api/v1/auth/password', { body: { currentPassword: 'a second typed passphrase', newPassword: 'a third typed passphrase' } })).response.status).toBe(200);
    expect((await client.DELETE('/api/v1/members/{userId}', { params: { path: { userId: memberId } } })).response.status).toBe(204);
    const key = await client.POST('/api/v1/api-keys', { body: { name: 'typed key', permissions: ['sessions:read'], sessionIds: [id] } });
    expect(key.response.status).toBe(201);
    expect((await client.GET('/api/v1/api-keys')).data?.data.map((k) => k.id)).toContain(key.data!.id);
    expect((await client.PATCH('/api/v1/api-keys/{id}', { params: { path: { id: key.data!.id } }, body: { name: 'typed key (renamed)' } })).data?.name).toBe('typed key (renamed)');
    expect((await client.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: key.data!.id } } })).response.status).toBe(204);
    expect((await client.GET('/api/v1/audit-log')).data?.data.length).toBeGreaterThan(0);
    expect((await client.GET('/api/v1/stats/overview')).data?.sessions).toBeDefined();

    // the session's life to its end
    expect((await client.POST('/api/v1/sessions/{id}:stop', { params: { path } })).data?.status).toBeDefined();
    expect((await client.POST('/api/v1/sessions/{id}:start', { params: { path } })).response.status).toBe(200);
    await waitFor(async () => ((await statusOf()) === 'working' ? true : null), 10000, 'working again');
    expect((await client.POST('/api/v1/sessions/{id}:restart', { params: { path } })).response.status).toBe(200);
    await waitFor(async () => ((await statusOf()) === 'working' ? true : null), 10000, 'working after the restart');
    expect((await client.POST('/api/v1/sessions/{id}:logout', { params: { path } })).data?.phoneNumber).toBeNull();
    expect((await client.DELETE('/api/v1/sessions/{id}', { params: { path } })).response.status).toBe(204);
    expect((await client.DELETE('/api/v1/sessions/{id}', { params: { path: { id: second.id } } })).response.status).toBe(204);

    expect(mismatches).toEqual([]);
    // every operation of the document was called at least once
    expect(committedDocumentValidator().operationIds().filter((id) => !called.has(id)).sort()).toEqual([]);
  });

  it('sent only WebSocket frames that docs/asyncapi.yaml describes, one message per catalog type', () => {
    const asyncapi = yaml.load(readFileSync(join(ROOT, 'docs/asyncapi.yaml'), 'utf8')) as { components: { messages: Record<string, { payload: object }> } };
    expect(Object.keys(asyncapi.components.messages).sort()).toEqual(['ready', ...EVENT_TYPES].sort());
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema(JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')) as object, 'https://messaging-gateway.invalid/openapi.json');
    // the document's own `id` (a URN) is AsyncAPI's, not a schema id
    ajv.addSchema({ ...asyncapi, id: undefined }, 'https://messaging-gateway.invalid/asyncapi.json');
    const problems: string[] = [];
    for (const frame of frames) {
      const name = (frame.event as string | undefined) ?? 'ready';
      const validate = ajv.compile({ $ref: `https://messaging-gateway.invalid/asyncapi.json#/components/messages/${name.replace(/\//g, '~1')}/payload` });
      if (!validate(frame)) problems.push(`${name}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(problems).toEqual([]);
    // the scenario above went through these
    for (const seen of ['ready', 'session.status', 'auth.qr', 'session.connected', 'message.sent', 'message.received', 'group.created', 'session.logged_out']) {
      expect(frames.map((f) => (f.event as string | undefined) ?? (f.type as string))).toContain(seen);
    }
  });
});
