import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace per engine pass (runs may overlap; both passes share one jest process)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:calls-${process.env.E2E_ENGINE ?? 'sim'}-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { E2E_ENGINE, pairSession, PAIRING_TIMEOUT_MS } from './support/engine';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { storedEvents } from './support/session-probes';
import { simControl } from './support/sim-control';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the simulator and of the API
type Json = any;

const CONTACT = '15550016666@s.whatsapp.net';

/**
 * CONTRACT 13's calls on both engines (the engine matrix): a contact rings the session through the simulator's control
 * API (on baileys a `<call><offer>` over the WhatsApp Web door); the session's `rejectCalls` rejects it on its own and
 * `call.incoming` says `rejected: true`; a ringing call is rejected with `POST …/calls/{callId}:reject` (on baileys
 * Baileys' `<call><reject>`, acked by the network, which then ends the call); the network records each rejection.
 */
describe(`Calls: rejectCalls and calls:reject (${E2E_ENGINE} engine)`, () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl = '';
  let org: SeededOrg;
  let sessionId: string;

  const api = () => request(app.getHttpServer());
  const control = simControl(() => simUrl);
  const path = (rest: string) => `/api/v1/sessions/${sessionId}${rest}`;
  const ring = async (isVideo: boolean): Promise<string> => {
    const res = await control.post(`/sim/sessions/${sessionId}/call`, { from: CONTACT, isVideo });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).callId;
  };
  const incoming = (callId: string) =>
    waitFor(async () => (await storedEvents(sessionId, 'call.incoming')).find((e) => e.payload.callId === callId)?.payload, 20000, `call.incoming for ${callId}`);
  const onNetwork = async (callId: string): Promise<Json> => (await control.get(`/sim/calls?sessionId=${sessionId}`)).data.find((c: Json) => c.callId === callId);

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(`gw-calls-${E2E_ENGINE}-${process.pid}`, { sim: { SIM_QR_INTERVAL_MS: '60000' }, gateway: { RECONNECT_BASE_DELAY_MS: '100' } }));
    app = await createApiApp({ quiet: true });
    await app.init();
    org = await seedOrganization(`Calls ${E2E_ENGINE} Inc`);
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Calls', rejectCalls: true });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await pairSession({ api, token: org.adminKey, simUrl, sessionId, phoneNumber: '15550012222' });
  }, 60_000 + PAIRING_TIMEOUT_MS);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('rejectCalls rejects a call on its own (call.incoming rejected: true, the network saw the rejection)', async () => {
    const callId = await ring(false);
    expect(await incoming(callId)).toEqual({ callId, from: CONTACT, isVideo: false, isGroup: false, rejected: true });
    expect((await onNetwork(callId)).rejected).toEqual(expect.any(Number));
  }, 40_000);

  it('a ringing call is rejected through calls:reject; again is 409, a call never placed 404', async () => {
    expect((await api().patch(path('')).set(bearer(org.adminKey)).send({ rejectCalls: false })).body.rejectCalls).toBe(false);
    const callId = await ring(true);
    expect(await incoming(callId)).toEqual({ callId, from: CONTACT, isVideo: true, isGroup: false, rejected: false });
    expect((await onNetwork(callId)).rejected).toBeNull();
    const rejected = await api().post(path(`/calls/${callId}:reject`)).set(bearer(org.adminKey));
    expect([rejected.status, rejected.body]).toEqual([204, {}]);
    expect((await onNetwork(callId)).rejected).toEqual(expect.any(Number));
    expect((await api().post(path(`/calls/${callId}:reject`)).set(bearer(org.adminKey))).status).toBe(409);
    expect((await api().post(path('/calls/ABCDEF0123:reject')).set(bearer(org.adminKey))).status).toBe(404);
  }, 40_000);
});
