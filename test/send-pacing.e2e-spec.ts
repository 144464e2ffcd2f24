import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (runs may overlap)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:pacing-${process.pid}`;

import { createApiApp } from '../apps/api/src/bootstrap';
import { pacingBounds } from '../apps/gateway/src/messages/send-pacing';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the simulator
type Json = any;

const OWN_PHONE = '15550004444';
const TO = '15550008888@s.whatsapp.net';
/** 120 per minute: a mean gap of 500 ms, 350–650 ms with the jitter */
const RATE_PER_MIN = 120;
const BACKLOG = 6;

/**
 * Issue 19 item 10 on the `sim` engine: messages accepted while the session's gateway was down are the backlog of its
 * next connection, and the simulator records each send's arrival. The gaps between them must lie within the pacing
 * policy's bounds for the session's ratePerMin (not back to back), and differ from one another (jitter).
 */
describe('Pacing of a backlog after an outage (sim engine)', () => {
  let app: NestExpressApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let gatewayHealthPort: number;
  let org: SeededOrg;
  let sessionId: string;
  const gatewayId = `gw-pacing-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const simGet = async (path: string): Promise<Json> => (await fetch(simUrl + path)).json();
  const startGateway = () =>
    startApp(
      'gateway',
      {
        GATEWAY_ID: gatewayId,
        GATEWAY_ENGINE: 'sim',
        NETWORK_SIM_URL: simUrl,
        GATEWAY_HEALTH_PORT: String(gatewayHealthPort),
        GATEWAY_HEARTBEAT_MS: '300',
        GATEWAY_TTL_MS: '2000',
        RECONNECT_BASE_DELAY_MS: '100',
        MESSAGE_SWEEP_MS: '300',
      },
      `http://127.0.0.1:${gatewayHealthPort}/healthz`,
    );
  const send = async (text: string): Promise<Json> => {
    const res = await api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey)).send({ to: TO, text });
    if (res.status !== 202) throw new Error(`send answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  };

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    gatewayHealthPort = await freePort();
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    gateway = await startGateway();
    app = await createApiApp({ quiet: true });
    await app.listen(0, '127.0.0.1');
    org = await seedOrganization('Pacing Inc');
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Pacing', ratePerMin: RATE_PER_MIN, ratePerHour: 100000 });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).qr, 10000, 'a QR');
    const scan = await fetch(`${simUrl}/sim/sessions/${sessionId}/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: OWN_PHONE }) });
    expect(scan.status).toBe(200);
    await waitFor(async () => (await api().get(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey))).body.status === 'working', 10000, 'working');
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('sends the backlog at ratePerMin with jitter: every gap the simulator recorded lies within the policy bounds', async () => {
    // a frozen gateway: the row stays `working` (the API accepts), nothing is sent; then it dies and comes back
    process.kill(gateway.child.pid!, 'SIGSTOP');
    const accepted: Json[] = [];
    try {
      for (let i = 0; i < BACKLOG; i += 1) accepted.push(await send(`backlog ${i}`));
    } finally {
      await gateway.kill();
    }
    gateway = await startGateway();
    const ids = accepted.map((m) => m.waMessageId as string);
    const onNetwork = await waitFor(
      async () => {
        const sent = ((await simGet(`/sim/messages?sessionId=${sessionId}`)).data as Json[]).filter((m) => ids.includes(m.id));
        return sent.length === BACKLOG ? sent : null;
      },
      30000,
      'the backlog on the network',
    );
    expect(onNetwork.map((m) => m.id)).toEqual(ids);
    const gaps = onNetwork.slice(1).map((m, i) => m.timestamp - onNetwork[i].timestamp);
    const { minMs, maxMs } = pacingBounds(RATE_PER_MIN);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(Math.floor(minMs));
      // the upper bound of the drawn gap, plus what one send takes through the gateway and the simulator
      expect(gap).toBeLessThanOrEqual(maxMs + 500);
    }
    expect(new Set(gaps).size).toBeGreaterThan(1);
  }, 60000);
});
