import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:pairing-code-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { sessionProbes } from './support/session-probes';

/** How long Baileys shows each QR here (BAILEYS_QR_TIMEOUT_MS): WhatsApp's six refs last 6 s instead of 160 s. */
const QR_MS = 1000;
/** QRs shown unscanned before `failed`: one more than the refs of one socket, so a session outlives Baileys' own end of them */
const QR_MAX_RETRIES = 6;

/**
 * Pairing by code on the real engine against the WhatsApp Web emulator (issue 36 item 5), with QR rotations of a second:
 * a code typed after more rotations than QR_MAX_RETRIES and than the socket's refs still pairs; a session whose QR is
 * never scanned ends `failed` / `qr_not_scanned`; a drop while the code is typed shows `pairing_code_dropped: …` and a
 * new code pairs.
 */
describe('Pairing by code on the Baileys engine (WhatsApp Web emulator)', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  const gatewayId = `gw-pairing-code-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simFetch } = simControl(() => simUrl);
  const { getSession, waitStatus: waitStatusWithin } = sessionProbes(api, () => org.adminKey);
  const waitStatus = (id: string, status: string) => waitStatusWithin(id, status, 30000);
  const createSession = async (label: string): Promise<string> => {
    const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const requestCode = async (id: string, phoneNumber: string): Promise<string> => {
    const res = await api().post(`/api/v1/sessions/${id}:request-code`).set(bearer(org.adminKey)).send({ phoneNumber });
    expect(res.status).toBe(200);
    return res.body.code;
  };
  const typeCode = async (id: string, code: string) => (await simFetch(`/sim/sessions/${id}/pair-code`, { code })).status;

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, {
      engine: 'baileys',
      sim: { SIM_QR_INTERVAL_MS: '60000' },
      gateway: {
        BAILEYS_QR_TIMEOUT_MS: String(QR_MS),
        QR_MAX_RETRIES: String(QR_MAX_RETRIES),
        RECONNECT_BASE_DELAY_MS: '100',
        // Baileys' first login generates 812 pre-keys: a loaded machine must not fence the node over it (docs/testing.md)
        GATEWAY_HEARTBEAT_MS: '1000',
        GATEWAY_TTL_MS: '10000',
      },
    }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Pairing Code Inc');
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('a code typed after more QR rotations than QR_MAX_RETRIES and the socket\'s refs pairs; an unscanned QR ends failed / qr_not_scanned', async () => {
    const typing = await createSession('Typing slowly');
    await waitStatus(typing, 'scan_qr_code');
    const code = await requestCode(typing, '15557780001');
    expect(await getSession(typing)).toMatchObject({ status: 'scan_qr_code', statusReason: 'pairing_code_requested', nextAttemptAt: null });
    // the clock of this test: a session created after the code was requested, whose QR nobody scans, runs through its
    // socket's six refs (Baileys ends that socket), reconnects, and fails at its 7th QR; the typing one is older still
    const unscanned = await createSession('Nobody scans');
    const failed = await waitStatus(unscanned, 'failed');
    expect(failed).toMatchObject({ statusReason: 'qr_not_scanned', nextAttemptAt: null, phoneNumber: null });
    // the typing session still waits on the socket it asked the code on: no rotation counted, none of its refs ran out
    expect(await getSession(typing)).toMatchObject({ status: 'scan_qr_code', statusReason: 'pairing_code_requested' });
    expect(await typeCode(typing, code)).toBe(200);
    expect(await simGet(`/sim/sessions/${typing}`)).toMatchObject({ state: 'paired', phoneNumber: '15557780001' });
    expect(await waitStatus(typing, 'working')).toMatchObject({ phoneNumber: '15557780001', statusReason: 'connected' });
  }, 90000);

  it('a drop while the code is typed says pairing_code_dropped, the old code is dead, and a new code pairs', async () => {
    const id = await createSession('Dropped while typing');
    await waitStatus(id, 'scan_qr_code');
    const first = await requestCode(id, '15557780002');
    expect((await simFetch(`/sim/sessions/${id}/fault`, { kind: 'drop' })).status).toBe(200);
    // reconnected at once with a fresh QR, and the reason says why the code no longer works
    const dropped = await waitFor(async () => {
      const s = await getSession(id);
      return s.status === 'scan_qr_code' && String(s.statusReason).startsWith('pairing_code_dropped: ') ? s : null;
    }, 30000, 'the session back on a QR, saying pairing_code_dropped');
    expect(dropped.nextAttemptAt).toBeNull();
    expect(await typeCode(id, first)).toBe(409);
    const second = await requestCode(id, '15557780002');
    expect((await getSession(id)).statusReason).toBe('pairing_code_requested');
    expect(await typeCode(id, second)).toBe(200);
    expect(await waitStatus(id, 'working')).toMatchObject({ phoneNumber: '15557780002', statusReason: 'connected' });
  }, 90000);
});
