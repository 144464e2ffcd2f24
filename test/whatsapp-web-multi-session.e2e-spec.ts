import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:whatsapp-web-multi-${process.pid}`;

import { createApiApp } from '../apps/api/src/bootstrap';
import { pairSession } from './support/engine';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';

const CONTACT = '15557773333@s.whatsapp.net';
const PER_SESSION = 4;

/**
 * Two of our sessions (two WhatsApp Web devices of two accounts, on the Baileys engine) write to one contact at once.
 * Each device fetches the contact's key bundle to start its Signal session; the network serves each one-time pre-key
 * once, as WhatsApp does, so both sessions' pkmsgs are read. Every message is counted on both sides: `sent` in our
 * database and decrypted by the contact (`GET /sim/messages`), 0 lost.
 */
describe('Two sessions writing to one contact over the WhatsApp Web front door (baileys engine)', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  const sessions: string[] = [];
  const api = () => request(app.getHttpServer());
  const { get: simGet } = simControl(() => simUrl);

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(`gw-waweb-multi-${process.pid}`, {
      engine: 'baileys',
      sim: { SIM_QR_INTERVAL_MS: '60000' },
      gateway: { RECONNECT_BASE_DELAY_MS: '100', GATEWAY_HEARTBEAT_MS: '1000', GATEWAY_TTL_MS: '10000' },
    }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('WhatsApp Web Multi Inc');
    for (const [i, phoneNumber] of ['15557773001', '15557773002'].entries()) {
      const s = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `Device ${i}`, ratePerMin: 10000, ratePerHour: 1000000 });
      expect(s.status).toBe(201);
      sessions.push(s.body.id);
      await pairSession({ api, token: org.adminKey, simUrl, sessionId: s.body.id, phoneNumber, timeoutMs: 60000 });
    }
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('every message of both sessions is sent in our database and read by the contact: 0 lost', async () => {
    // interleaved: both devices start their sessions with the contact at about the same time
    const accepted: Array<{ sessionId: string; id: string; text: string }> = [];
    for (let n = 0; n < PER_SESSION; n++) {
      for (const [i, sessionId] of sessions.entries()) {
        const text = `device ${i} message ${n}`;
        const res = await api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey)).send({ to: CONTACT, text });
        expect(res.status).toBe(202);
        accepted.push({ sessionId, id: res.body.id, text });
      }
    }
    const sent = await waitFor(async () => {
      const rows = await Promise.all(accepted.map(async (m) => (await api().get(`/api/v1/sessions/${m.sessionId}/messages/${m.id}`).set(bearer(org.adminKey))).body));
      return rows.every((r) => r.status === 'sent') ? rows : null;
    }, 60000, 'every message to be sent');
    expect(sent).toHaveLength(2 * PER_SESSION);

    // the contact decrypted each (the network records a device's message only once its recipient read it); a message
    // it could not read never shows up, so the wait ends in the list of the lost ones
    type OnNetwork = { id: string; to: string; text: string; sends: number };
    const onNetwork = async () => (await Promise.all(sessions.map(async (sessionId) => (await simGet(`/sim/messages?sessionId=${sessionId}`)).data as OnNetwork[]))).flat();
    await waitFor(async () => (await onNetwork()).length >= sent.length, 20000, 'the contact to read every message').catch(() => undefined);
    const byId = new Map((await onNetwork()).map((m) => [m.id, m]));
    const lost = sent.filter((m) => byId.get(m.waMessageId)?.text !== m.text || byId.get(m.waMessageId)?.to !== CONTACT);
    expect(lost.map((m) => m.text)).toEqual([]);
    expect([...byId.values()].map((m) => m.sends)).toEqual(sent.map(() => 1));
  }, 120_000);
});
