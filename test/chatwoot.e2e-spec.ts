import { isolateFleet } from './support/fleet-harness';

// a database of this file's own: the dispatcher fans out every outbox event of its database
const isolated = isolateFleet('chatwoot');

import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { startApi } from './support/api-app';
import { ChatwootStandin } from './support/chatwoot-standin';
import { E2E_ENGINE, engineEnv, pairSession } from './support/engine';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { deliveriesOf, startDispatcherProcess } from './support/receivers';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { simControl } from './support/sim-control';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the API and the simulator
type Json = any;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
// a 1×1 PNG
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/**
 * CONTRACT 16, the Chatwoot half: a session's inbox in a Chatwoot (the stand-in of test/support/chatwoot-standin.ts, a
 * real HTTP server with Chatwoot's routes and payloads), fed by the real dispatcher process; agents' replies through
 * Chatwoot's webhook to the real API and gateway. Runs on the pass's engine (sim, and baileys in the e2e-baileys pass).
 */
describe(`chatwoot integration (${E2E_ENGINE})`, () => {
  let db: DataSource;
  let app: NestExpressApplication;
  let api: Awaited<ReturnType<typeof startApi>>;
  let apiUrl: string;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: AppProcess;
  let dispatcher: AppProcess;
  let chatwoot: ChatwootStandin;
  let org: SeededOrg;
  let other: SeededOrg;
  let sessionId: string;
  let integration: Json;
  const simc = simControl(() => simUrl);
  const CONTACT = '15557001001';
  const JID = `${CONTACT}@s.whatsapp.net`;
  const http = () => api.http();
  const inbound = async (body: object): Promise<string> => {
    const res = await simc.post(`/sim/sessions/${sessionId}/inbound`, body);
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).id;
  };
  const conversation = () => chatwoot.conversationOfPhone(`+${CONTACT}`);
  const bySource = (waId: string) => chatwoot.messages.filter((m) => m.source_id === `WAID:${waId}`);
  /** the webhook URL the integration answered, on the address this run's API listens at */
  const aimWebhook = () => {
    const u = new URL(integration.webhookUrl);
    chatwoot.webhookUrl = `${apiUrl}${u.pathname}${u.search}`;
  };
  const listen = async () => {
    await app.listen(0, '127.0.0.1');
    apiUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    await isolated.create();
    db = await testDataSource();
    chatwoot = new ChatwootStandin();
    let gw: Awaited<ReturnType<typeof startSimGateway>>;
    [api, gw] = await Promise.all([startApi(), startSimGateway(`gw-chatwoot-${process.pid}`), chatwoot.start()]);
    ({ sim, simUrl, gateway } = gw);
    app = api.app;
    await listen();
    // the dispatcher reads inbound media from the network that holds it (engine variables as the gateway's)
    const { NETWORK_SIM_URL, WHATSAPP_EMULATOR_URL } = engineEnv(simUrl);
    dispatcher = await startDispatcherProcess({ WEBHOOK_BREAKER_FAILURES: '100000', NETWORK_SIM_URL, ...(WHATSAPP_EMULATOR_URL ? { WHATSAPP_EMULATOR_URL } : {}) });
    org = await seedOrganization('Chatwoot');
    other = await seedOrganization('Chatwoot Other');
    const created = await http().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'support' });
    sessionId = created.body.id;
    await pairSession({ api: http, token: org.adminKey, simUrl, sessionId });
    await simc.post('/sim/contacts', { phoneNumber: CONTACT, name: 'Rita Customer' });
  }, 120_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await gateway?.stop();
    await sim?.stop();
    await chatwoot?.close();
    await app?.close();
    await closeTestDataSource();
    await isolated.drop();
  });

  it('connects with the token masked and answers the webhook URL; another organization sees nothing', async () => {
    const res = await http().put(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey))
      .send({ baseUrl: chatwoot.url, accountId: chatwoot.accountId, apiAccessToken: chatwoot.token, inboxId: chatwoot.inboxId, signMessages: true });
    expect(res.status).toBe(200);
    integration = res.body;
    expect(integration).toMatchObject({ sessionId, baseUrl: chatwoot.url, inboxId: chatwoot.inboxId, signMessages: true, groups: false, active: true, apiAccessToken: '***cdef' });
    expect(JSON.stringify(integration)).not.toContain(chatwoot.token);
    expect(integration.webhookUrl).toMatch(new RegExp(`/api/v1/integrations/chatwoot/${integration.id}/webhook\\?secret=[A-Za-z0-9_-]{20,}$`));
    aimWebhook();
    // the token is stored encrypted, never as given
    const [row] = await db.query(`SELECT secret_encrypted FROM webhooks WHERE id = $1`, [integration.id]);
    expect(row.secret_encrypted).not.toContain(chatwoot.token);
    expect((await http().get(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(other.adminKey))).status).toBe(404);
    expect((await http().put(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(other.adminKey)).send({ baseUrl: chatwoot.url, accountId: 1, apiAccessToken: 'x', inboxId: 1 })).status).toBe(404);
  });

  it('shows inbound text, media, a reply, a reaction, an edit and a delete in the contact\'s conversation', async () => {
    const first = await inbound({ from: JID, text: 'Hello, is my order ready?' });
    const photo = await inbound({ from: JID, type: 'image', text: 'the receipt', media: { base64: PNG.toString('base64'), mimetype: 'image/png', filename: 'receipt.png' } });
    const reply = await inbound({ from: JID, text: 'answering myself', quotedWaMessageId: first });
    await waitFor(() => bySource(reply).length === 1, 30_000, 'the reply in Chatwoot');
    await simc.post(`/sim/sessions/${sessionId}/reaction`, { from: JID, waMessageId: first, emoji: '👍' });
    await simc.post(`/sim/sessions/${sessionId}/edit`, { from: JID, waMessageId: first, text: 'Hello, is my order shipped?' });
    await simc.post(`/sim/sessions/${sessionId}/revoke`, { from: JID, waMessageId: reply });
    const conv = await waitFor(() => (conversation() && chatwoot.messagesOf(conversation()!.id).length >= 6 ? conversation() : null), 30_000, 'six messages in the conversation').catch(async (err) => {
      console.log(JSON.stringify(chatwoot.messages.map((m) => ({ ...m, attachments: m.attachments.length })), null, 1), await db.query(`SELECT event_id, status, attempts, last_error FROM deliveries`));
      throw err;
    });

    const contact = chatwoot.contacts.find((c) => c.phone_number === `+${CONTACT}`)!;
    expect(chatwoot.conversations.filter((c) => c.contact_id === contact.id)).toHaveLength(1);
    const [text] = bySource(first);
    expect(text).toMatchObject({ content: 'Hello, is my order ready?', message_type: 'incoming', private: false });
    const [image] = bySource(photo);
    expect(image.content).toBe('the receipt');
    expect(image.attachments).toHaveLength(1);
    expect(image.attachments[0]).toMatchObject({ file_type: 'image', mimetype: 'image/png', sha256: sha256(PNG) });
    expect(bySource(reply)[0].content_attributes).toEqual({ in_reply_to: text.id });
    const marks = chatwoot.messagesOf(conv.id).filter((m) => m.content_attributes.in_reply_to !== undefined && !m.source_id?.startsWith(`WAID:${reply}`));
    expect(marks).toEqual(expect.arrayContaining([
      expect.objectContaining({ private: true, content: 'Rita Customer reacted 👍', content_attributes: { in_reply_to: text.id } }),
      expect.objectContaining({ private: false, content: '✏️ Edited: Hello, is my order shipped?', content_attributes: { in_reply_to: text.id } }),
      expect.objectContaining({ content: '🗑️ This message was deleted on WhatsApp', content_attributes: { in_reply_to: bySource(reply)[0].id } }),
    ]));
    // one Chatwoot message per WhatsApp message or mark: nothing doubled
    expect(chatwoot.messagesOf(conv.id)).toHaveLength(6);
    // named by push name (the contact is created by number when its first message outruns the push name, then renamed)
    expect(contact.name).toBe('Rita Customer');
  }, 60_000);

  it('sends an agent\'s reply to WhatsApp once, whatever Chatwoot redelivers, across an API restart', async () => {
    const conv = conversation()!;
    const [quotedCw] = bySource((await db.query(`SELECT wa_message_id FROM messages WHERE session_id = $1 AND text = 'Hello, is my order shipped?'`, [sessionId]))[0].wa_message_id);
    const first = await chatwoot.agentReply(conv.id, { content: 'It ships today', agentName: 'Dana Agent', inReplyTo: quotedCw.id, attachments: [{ filename: 'label.png', mimetype: 'image/png', bytes: PNG }] });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ outcome: 'sent' });
    // Chatwoot's job runs again, twice at once
    const again = await Promise.all([chatwoot.deliverWebhook(first.message), chatwoot.deliverWebhook(first.message)]);
    expect(again.map((a) => (a.body as Json).messageIds)).toEqual([(first.body as Json).messageIds, (first.body as Json).messageIds]);
    // the API goes away and comes back; Chatwoot delivers once more
    await app.close();
    api = await startApi();
    app = api.app;
    await listen();
    aimWebhook();
    const afterRestart = await chatwoot.deliverWebhook(first.message);
    expect((afterRestart.body as Json).messageIds).toEqual((first.body as Json).messageIds);
    // its own echo (a message the gateway created) and a private note are not sent
    const note = await chatwoot.agentReply(conv.id, { content: 'internal: VIP', private: true });
    expect(note.body).toMatchObject({ outcome: 'ignored' });

    const onNetwork = await waitFor(async () => {
      const sent = ((await simc.get(`/sim/messages?sessionId=${sessionId}`)).data as Json[]).filter((m) => m.to === JID);
      return sent.length ? sent : null;
    }, 30_000, 'the reply on the network');
    expect(onNetwork).toHaveLength(1);
    expect(onNetwork[0]).toMatchObject({ type: 'image', text: '*Dana Agent:*\nIt ships today', sends: 1, media: { sha256: sha256(PNG) } });
    expect(onNetwork[0].quotedWaMessageId).toBeTruthy();
    const rows = await db.query(`SELECT id FROM messages WHERE session_id = $1 AND direction = 'out'`, [sessionId]);
    expect(rows).toHaveLength(1);
  }, 60_000);

  it('loses nothing while Chatwoot answers 500 and then 429: every message arrives once, retried', async () => {
    chatwoot.failWith(500);
    const refusedBefore = chatwoot.refused;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await inbound({ from: JID, text: `during the outage ${i}` }));
    await waitFor(() => chatwoot.refused >= refusedBefore + 4, 30_000, 'Chatwoot to refuse');
    const failing = await http().get(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey));
    expect(failing.body.lastError).toMatch(/500/);
    chatwoot.failWith(429, '1');
    await waitFor(() => chatwoot.requests.some((r) => r.status === 429), 30_000, 'a 429');
    chatwoot.recover();
    await waitFor(() => ids.every((id) => bySource(id).length > 0), 60_000, 'every message in Chatwoot');
    const lost = ids.filter((id) => bySource(id).length === 0).length;
    const duplicated = ids.filter((id) => bySource(id).length > 1).length;
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    const deliveries = await deliveriesOf(db, integration.id);
    expect(deliveries.some((d) => d.attempts > 1 && d.status === 'delivered')).toBe(true);
    await waitFor(async () => (await http().get(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey))).body.lastError === null, 10_000, 'lastError cleared');
  }, 90_000);

  it('refuses Chatwoot calls without the integration\'s secret, and sends from no other organization\'s session', async () => {
    const path = `/api/v1/integrations/chatwoot/${integration.id}/webhook`;
    const payload = chatwoot.webhookData(chatwoot.messages.find((m) => m.message_type === 'outgoing' && !m.private)!);
    expect((await http().post(path).send(payload)).status).toBe(401);
    expect((await http().post(`${path}?secret=wrong`).send(payload)).status).toBe(401);
    // another organization's integration, with this one's secret: refused, nothing sent
    const otherSession = (await http().post('/api/v1/sessions').set(bearer(other.adminKey)).send({ label: 'other' })).body.id;
    const theirs = await http().put(`/api/v1/sessions/${otherSession}/integrations/chatwoot`).set(bearer(other.adminKey))
      .send({ baseUrl: chatwoot.url, accountId: chatwoot.accountId, apiAccessToken: 'their-token-123456', inboxId: chatwoot.inboxId });
    expect(theirs.status).toBe(200);
    const secret = new URL(integration.webhookUrl).searchParams.get('secret');
    const cross = await http().post(`/api/v1/integrations/chatwoot/${theirs.body.id}/webhook?secret=${secret}`).send({ ...payload, id: 999_001 });
    expect(cross.status).toBe(401);
    expect(await db.query(`SELECT id FROM messages WHERE session_id = $1`, [otherSession])).toHaveLength(0);
    // the header form of the secret works as the query does
    const viaHeader = await http().post(path).set('X-Chatwoot-Secret', secret!).send({ ...payload, private: true });
    expect(viaHeader.body).toMatchObject({ outcome: 'ignored' });
  });

  it('imports the recent history once, own messages as outgoing, and sends none of it back', async () => {
    // connected afresh with importDays: the log's messages go to the new integration, each once
    expect((await http().delete(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey))).status).toBe(204);
    const before = chatwoot.messages.length;
    const res = await http().put(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey))
      .send({ baseUrl: chatwoot.url, accountId: chatwoot.accountId, apiAccessToken: chatwoot.token, inboxId: chatwoot.inboxId, importDays: 1 });
    expect(res.body.importState).toBe('pending');
    integration = res.body;
    aimWebhook();
    await waitFor(async () => (await http().get(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey))).body.importState === 'imported', 60_000, 'the import');
    const log: Array<{ wa_message_id: string; direction: string }> = await db.query(`SELECT wa_message_id, direction FROM messages WHERE session_id = $1 AND chat_jid = $2`, [sessionId, JID]);
    const imported = chatwoot.messages.slice(before);
    for (const m of log) {
      const shown = imported.filter((c) => c.source_id === `WAID:${m.wa_message_id}`);
      expect({ id: m.wa_message_id, count: shown.length, type: shown[0]?.message_type }).toEqual({ id: m.wa_message_id, count: 1, type: m.direction === 'in' ? 'incoming' : 'outgoing' });
    }
    // the outgoing ones fired Chatwoot's webhook: answered, ignored, nothing sent again
    await waitFor(() => chatwoot.echoes.length >= log.filter((m) => m.direction === 'out').length, 10_000, 'the echoes');
    expect((await db.query(`SELECT id FROM messages WHERE session_id = $1 AND direction = 'out'`, [sessionId])).length).toBe(1);
  }, 90_000);

  it('refuses a loopback Chatwoot unless private targets are allowed', async () => {
    const strict = await startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const res = await strict.http().put(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey))
        .send({ baseUrl: chatwoot.url, accountId: 1, apiAccessToken: chatwoot.token, inboxId: chatwoot.inboxId });
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields.baseUrl[0]).toMatch(/not allowed/);
    } finally {
      await strict.app.close();
    }
    // the stored integration is unchanged
    expect((await http().get(`/api/v1/sessions/${sessionId}/integrations/chatwoot`).set(bearer(org.adminKey))).body.baseUrl).toBe(chatwoot.url);
  });
});
