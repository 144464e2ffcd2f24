/**
 * The n8n community node package (CONTRACT 16, docs/integrations/n8n.md) in a real n8n: one n8n started once, one
 * workflow (trigger on message.received → echo text → reaction → poll), run against the simulator through the
 * gateway's real processes (sim gateway, dispatcher, API).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EVENT_TYPES, OUTBOUND_MESSAGE_TYPES } from '@app/contracts';
import { checkedRequest as request } from './support/api-app';
import { pairSession } from './support/engine';
import { buildNodePackage, ensureN8n, N8nInstall, NODE_PACKAGE_DIR, RunningN8n, startN8n } from './support/n8n';
import { AppProcess, freePort, startApp, startSimGateway, waitFor } from './support/processes';
import { startDispatcherProcess } from './support/receivers';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, asserted field by field
type Json = any;

const PKG = 'n8n-nodes-messaging-gateway';
const CONTACT = '15550104242';
const CONTACT_JID = `${CONTACT}@s.whatsapp.net`;

describe('n8n community nodes in a real n8n (CONTRACT 16)', () => {
  let install: N8nInstall;
  let n8n: RunningN8n;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: AppProcess;
  let dispatcher: AppProcess;
  let apiProcess: AppProcess;
  let apiUrl: string;
  let org: SeededOrg;
  let sessionId: string;
  let credentialId: string;
  let workflowId: string;
  let webhookId: string;

  const api = () => request(apiUrl);
  const simMessages = async (): Promise<Json[]> => ((await (await fetch(`${simUrl}/sim/messages?sessionId=${sessionId}`)).json()) as Json).data;
  const gatewayWebhooks = async (): Promise<Json[]> => (await api().get('/api/v1/webhooks').set(bearer(org.adminKey))).body.data;
  const executions = async (): Promise<Json[]> => {
    const res = await n8n.api('GET', `/executions?workflowId=${workflowId}&limit=100`);
    if (res.status !== 200) throw new Error(`n8n executions answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data;
  };

  beforeAll(async () => {
    // the install may take many minutes the first time on a loaded machine (measured in docs/integrations/n8n.md)
    install = await ensureN8n();
    process.stderr.write(
      `n8n e2e: n8n ${install.installed ? 'installed' : 'found'} in ${install.dir} (install took ${install.seconds} s, ${Math.round(install.bytes / 1048576)} MiB)\n`,
    );
    await buildNodePackage();

    const started = await startSimGateway(`gw-n8n-${process.pid}`, { engine: 'sim' });
    sim = started.sim;
    simUrl = started.simUrl;
    gateway = started.gateway;
    dispatcher = await startDispatcherProcess();
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    apiProcess = await startApp('api', { PORT: String(port) }, `${apiUrl}/healthz`);
    org = await seedOrganization('n8n');
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'n8n', autoRead: false });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await pairSession({ api, token: org.adminKey, simUrl, sessionId, phoneNumber: '15550100001' });

    const startedAt = Date.now();
    n8n = await startN8n(install);
    process.stderr.write(`n8n e2e: n8n ready in ${Math.round((Date.now() - startedAt) / 1000)} s\n`);
  }, 45 * 60_000);

  afterAll(async () => {
    await n8n?.proc.stop();
    await Promise.all([apiProcess?.stop(), dispatcher?.stop(), gateway?.stop()]);
    await sim?.stop();
    await closeTestDataSource();
  }, 60_000);

  it('offers every event of the catalog and every send type of the API', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the built package, as n8n loads it
    const catalog = require(join(NODE_PACKAGE_DIR, 'dist', 'nodes', 'MessagingGateway', 'catalog.js'));
    expect([...catalog.EVENT_TYPES].sort()).toEqual([...EVENT_TYPES].sort());
    expect([...catalog.MESSAGE_TYPES].sort()).toEqual([...OUTBOUND_MESSAGE_TYPES].sort());
  });

  it('loads the package: n8n knows both nodes and the credential, whose test accepts the key and refuses a wrong one', async () => {
    const nodeTypes = await n8n.rest('POST', '/node-types', { nodeInfos: [{ name: `${PKG}.messagingGateway`, version: 1 }, { name: `${PKG}.messagingGatewayTrigger`, version: 1 }] });
    expect(nodeTypes.status).toBe(200);
    expect(nodeTypes.body.data.map((n: Json) => n.displayName).sort()).toEqual(['Messaging Gateway', 'Messaging Gateway Trigger']);

    // allowedHttpRequestDomains: n8n 2.x adds it to every credential; its public API's schema wants it stated
    const data = { baseUrl: `${apiUrl}/`, apiKey: org.adminKey, allowedHttpRequestDomains: 'all' };
    const cred = await n8n.api('POST', '/credentials', { name: 'Messaging Gateway', type: 'messagingGatewayApi', data });
    expect({ status: cred.status, body: cred.body }).toMatchObject({ status: 200, body: { id: expect.any(String) } });
    credentialId = cred.body.id;
    // what the editor's "Test" (run on save) does: the credential's test request, GET /api/v1/auth/me
    const test = (apiKey: string) => n8n.rest('POST', '/credentials/test', { credentials: { id: credentialId, name: 'Messaging Gateway', type: 'messagingGatewayApi', data: { ...data, apiKey } } });
    expect((await test(org.adminKey)).body.data).toMatchObject({ status: 'OK' });
    expect((await test('gwk_wrong')).body.data).toMatchObject({ status: 'Error' });
  });

  it('activating the workflow registers one webhook at the gateway for the chosen events and session', async () => {
    const credentials = { messagingGatewayApi: { id: credentialId, name: 'Messaging Gateway' } };
    const sendNode = (name: string, position: number, parameters: Json) => ({
      id: randomUUID(),
      name,
      type: `${PKG}.messagingGateway`,
      typeVersion: 1,
      position: [position, 0],
      credentials,
      parameters: { resource: 'message', operation: 'send', sessionId: '={{ $("Gateway Trigger").item.json.sessionId }}', ...parameters },
    });
    const inbound = '$("Gateway Trigger").item.json.payload.message';
    const workflow = {
      name: 'WhatsApp echo',
      settings: { executionOrder: 'v1', saveDataSuccessExecution: 'all' },
      nodes: [
        {
          id: randomUUID(),
          name: 'Gateway Trigger',
          type: `${PKG}.messagingGatewayTrigger`,
          typeVersion: 1,
          position: [0, 0],
          webhookId: randomUUID(),
          credentials,
          parameters: { events: ['message.received'], sessionId },
        },
        sendNode('Echo', 250, {
          to: `={{ ${inbound}.chatJid }}`,
          type: 'text',
          text: `=echo: {{ ${inbound}.text }}`,
          // a redelivered event sends nothing twice: the event id is the send's idempotency key
          sendOptions: { idempotencyKey: '={{ $("Gateway Trigger").item.json.id }}' },
        }),
        sendNode('React', 500, { to: `={{ ${inbound}.chatJid }}`, type: 'reaction', reactionMessageId: `={{ ${inbound}.id }}`, emoji: '👍' }),
        sendNode('Poll', 750, { to: `={{ ${inbound}.chatJid }}`, type: 'poll', pollName: 'Did that help?', pollOptions: 'yes, no', selectableCount: 1 }),
        // a list read with "Return All" (pages followed by their cursor): one item per chat
        { ...sendNode('Chats', 1000, {}), parameters: { resource: 'chat', operation: 'list', sessionId: '={{ $("Gateway Trigger").item.json.sessionId }}', returnAll: true } },
      ],
      connections: {
        'Gateway Trigger': { main: [[{ node: 'Echo', type: 'main', index: 0 }]] },
        Echo: { main: [[{ node: 'React', type: 'main', index: 0 }]] },
        React: { main: [[{ node: 'Poll', type: 'main', index: 0 }]] },
        Poll: { main: [[{ node: 'Chats', type: 'main', index: 0 }]] },
      },
    };
    const created = await n8n.api('POST', '/workflows', workflow);
    expect(created.status).toBe(200);
    workflowId = created.body.id;
    expect(await gatewayWebhooks()).toEqual([]);

    const activated = await n8n.api('POST', `/workflows/${workflowId}/activate`);
    if (activated.status !== 200) throw new Error(`activation answered ${activated.status}: ${JSON.stringify(activated.body)}\n${n8n.proc.output().slice(-4000)}`);
    const hooks = await gatewayWebhooks();
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ url: expect.stringMatching(new RegExp(`^${n8n.url}/webhook/`)), events: ['message.received'], sessionId, active: true });
    webhookId = hooks[0].id;
  });

  it('a contact writes: the trigger starts the workflow, and the contact receives the echo, a reaction to its message and a poll', async () => {
    const inbound = await fetch(`${simUrl}/sim/sessions/${sessionId}/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: CONTACT, text: 'hello n8n' }),
    });
    expect(inbound.status).toBe(200);
    const inboundWaId: string = ((await inbound.json()) as Json).id;

    const answered = await waitFor(
      async () => {
        const got = await simMessages();
        const text = got.find((m) => m.type === 'text' && m.text === 'echo: hello n8n');
        const reaction = got.find((m) => m.type === 'reaction');
        const poll = got.find((m) => m.type === 'poll');
        return text && reaction && poll ? { text, reaction, poll, all: got } : null;
      },
      60_000,
      'the echo, the reaction and the poll on the network',
    );
    expect(answered.text.to).toBe(CONTACT_JID);
    expect(answered.reaction).toMatchObject({ to: CONTACT_JID, reaction: { waMessageId: inboundWaId, emoji: '👍' } });
    expect(answered.poll).toMatchObject({ to: CONTACT_JID, poll: { name: 'Did that help?', options: ['yes', 'no'], selectableCount: 1 } });
    // once each: one event, one run
    expect(answered.all.filter((m: Json) => m.type === 'text')).toHaveLength(1);
    const runs = await waitFor(async () => {
      const list = await executions();
      return list.length && list.every((e: Json) => e.finished) ? list : null;
    }, 30_000, 'the execution to finish');
    expect(runs.map((e: Json) => e.status)).toEqual(['success']);
    const run = (await n8n.api('GET', `/executions/${runs[0].id}?includeData=true`)).body;
    const chats = run.data.resultData.runData.Chats[0].data.main[0].map((item: Json) => item.json);
    expect(chats).toEqual([expect.objectContaining({ jid: CONTACT_JID, isGroup: false })]);
  }, 90_000);

  it('a delivery without a valid, fresh signature is answered 401 and starts nothing', async () => {
    const hook = (await gatewayWebhooks()).find((h) => h.id === webhookId);
    // the secret the trigger registered, from the workflow's static data (what a leaked secret would allow)
    const stored = (await n8n.api('GET', `/workflows/${workflowId}`)).body.staticData['node:Gateway Trigger'];
    expect(stored).toMatchObject({ webhookId, secret: expect.stringMatching(/^whsec_/) });
    const key = Buffer.from(stored.secret.slice('whsec_'.length), 'base64');
    const sign = (id: string, ts: string, body: string) => `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
    const envelope = JSON.stringify({ id: 'evt_forged', event: 'message.received', organizationId: org.id, sessionId, timestamp: Date.now(), payload: { message: { chatJid: CONTACT_JID, text: 'forged', id: 'msg_x' } } });
    const post = async (headers: Record<string, string>, body = envelope) => {
      const res = await fetch(hook.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      return { status: res.status, message: String(((await res.json().catch(() => ({}))) as Json).error?.message ?? '') };
    };
    const before = (await executions()).length;
    const now = String(Math.floor(Date.now() / 1000));
    const stale = String(Math.floor(Date.now() / 1000) - 600);
    const answers = {
      unsigned: await post({}),
      wrongSecret: await post({ 'webhook-id': 'evt_forged', 'webhook-timestamp': now, 'webhook-signature': `v1,${Buffer.alloc(64).toString('base64')}` }),
      // signed with the right secret, but the body was changed on the way
      tampered: await post({ 'webhook-id': 'evt_forged', 'webhook-timestamp': now, 'webhook-signature': sign('evt_forged', now, envelope) }, envelope.replace('forged', 'changed')),
      // a captured delivery replayed 10 minutes later
      replayed: await post({ 'webhook-id': 'evt_forged', 'webhook-timestamp': stale, 'webhook-signature': sign('evt_forged', stale, envelope) }),
    };
    expect(answers).toEqual({
      unsigned: { status: 401, message: expect.stringContaining('missing webhook-id') },
      wrongSecret: { status: 401, message: expect.stringContaining('signature does not match') },
      tampered: { status: 401, message: expect.stringContaining('signature does not match') },
      replayed: { status: 401, message: expect.stringContaining('outside the tolerance') },
    });
    expect(await executions()).toHaveLength(before);
    expect((await simMessages()).filter((m) => m.text === 'echo: forged')).toEqual([]);
  });

  it('deactivating the workflow deletes its webhook at the gateway', async () => {
    const res = await n8n.api('POST', `/workflows/${workflowId}/deactivate`);
    expect(res.status).toBe(200);
    expect(await gatewayWebhooks()).toEqual([]);
    expect((await api().get(`/api/v1/webhooks/${webhookId}`).set(bearer(org.adminKey))).status).toBe(404);
  });
});
