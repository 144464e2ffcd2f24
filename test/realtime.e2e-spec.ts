import { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { EventPublisher } from '@app/events';
import type { EventEnvelope } from '@app/contracts';
import { startApi } from './support/api-app';
import { closeTestDataSource, seedOrganization, SeededOrg } from './support/seed';
import { opaqueEvent } from './support/opaque-event';

describe('realtime WebSocket GET /api/v1/ws', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let base: string;
  let acme: SeededOrg;
  let globex: SeededOrg;
  let publisher: EventPublisher;
  const open: WebSocket[] = [];

  beforeAll(async () => {
    api = await startApi();
    await api.app.listen(0, '127.0.0.1');
    base = `ws://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}/api/v1/ws`;
    acme = await seedOrganization('WS Acme');
    globex = await seedOrganization('WS Globex');
    publisher = api.app.get(EventPublisher);
  });
  afterAll(async () => {
    for (const ws of open) ws.terminate();
    await api.app.close();
    await closeTestDataSource();
  });

  /** Connects and collects envelopes until closed. */
  async function connect(query: string, headers: Record<string, string> = {}) {
    const ws = new WebSocket(`${base}${query}`, { headers });
    open.push(ws);
    const received: EventEnvelope[] = [];
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (msg.id) received.push(msg);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('message', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    return { ws, received };
  }

  const waitUntil = async (cond: () => boolean) => {
    for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  };

  it('pushes the organization\'s envelopes, filtered by sessionId and events, never another organization\'s', async () => {
    const all = await connect(`?token=${acme.adminKey}`);
    const scoped = await connect('?sessionId=ses_A&events=message.received', { Authorization: `Bearer ${acme.users.viewer.token}` });
    const other = await connect(`?token=${globex.adminKey}`);
    await new Promise((r) => setTimeout(r, 200));

    const a1 = await publisher.publish(opaqueEvent({ event: 'message.received', organizationId: acme.id, sessionId: 'ses_A', payload: { text: 'hi' } }));
    const a2 = await publisher.publish(opaqueEvent({ event: 'session.status', organizationId: acme.id, sessionId: 'ses_A', payload: { status: 'working' } }));
    const a3 = await publisher.publish(opaqueEvent({ event: 'message.received', organizationId: acme.id, sessionId: 'ses_B', payload: { text: 'yo' } }));
    const g1 = await publisher.publish(opaqueEvent({ event: 'message.received', organizationId: globex.id, sessionId: 'ses_G', payload: { text: 'x' } }));

    await waitUntil(() => all.received.length >= 3 && other.received.length >= 1 && scoped.received.length >= 1);
    expect(all.received.map((e) => e.id)).toEqual([a1.id, a2.id, a3.id]);
    expect(all.received[0]).toEqual(a1);
    expect(scoped.received.map((e) => e.id)).toEqual([a1.id]);
    expect(other.received.map((e) => e.id)).toEqual([g1.id]);
  });

  it('refuses a missing or bad token with 401 and a key without sessions:read with 403', async () => {
    await expect(connect('')).rejects.toThrow('HTTP 401');
    await expect(connect('?token=gwk_bogus')).rejects.toThrow('HTTP 401');
    const webhooksOnly = await acme.apiKey(['webhooks:manage']);
    await expect(connect(`?token=${webhooksOnly.token}`)).rejects.toThrow('HTTP 403');
  });
});
