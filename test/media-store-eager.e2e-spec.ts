import type { NestExpressApplication } from '@nestjs/platform-express';
import { createHash } from 'node:crypto';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (its gateways, its download queue)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:eager-${process.pid}`;

import { MediaBlobsRepository } from '@app/database';
import { type MediaStore, PostgresMediaStore, S3MediaStore } from '@app/media';
import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { S3RVER_CREDENTIALS, S3Server, startS3Server } from './support/s3-server';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource, testDb } from './support/seed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the simulator and the API
type Json = any;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const FROM = '15550007777@s.whatsapp.net';

/**
 * Issue 19 item 9, eager media (docs/media-store.md), end to end: the API in-process, a `sim` gateway and the network
 * simulator as processes, and the operator's store: PostgreSQL, or an S3-compatible bucket (s3rver in this process).
 * Inbound media is kept without any GET; once the simulator has forgotten it (restarted) and the gateway is stopped,
 * the API with the store still serves it byte for byte, while an API without a store (MEDIA_STORE=none, the on-demand
 * path) answers 404. Deleting the session forgets what was kept.
 */
describe.each(['postgres', 's3'] as const)('Eager inbound media with MEDIA_STORE=%s', (kind) => {
  let sim: AppProcess;
  let gateway: AppProcess;
  let withStore: NestExpressApplication;
  let withoutStore: NestExpressApplication;
  let s3: S3Server | null = null;
  let store: MediaStore;
  let org: SeededOrg;
  let sessionId: string;
  let simPort: number;
  let simUrl: string;
  let gatewayHealthPort: number;
  let storeEnv: Record<string, string>;
  const gatewayId = `gw-eager-${kind}-${process.pid}`;
  const savedEnv: Record<string, string | undefined> = {};

  const simGet = async (path: string): Promise<Json> => (await fetch(simUrl + path)).json();
  const simCall = async (path: string, body: object = {}): Promise<Json> => {
    const res = await fetch(simUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json()) as Json;
    if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const startSim = () => startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
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
        MEDIA_STORE_BACKOFF_MS: '200',
        MEDIA_STORE_ATTEMPTS: '10',
        ...storeEnv,
      },
      `http://127.0.0.1:${gatewayHealthPort}/healthz`,
    );
  const api = (app: NestExpressApplication) => request(app.getHttpServer());
  const download = (app: NestExpressApplication, messageId: string) =>
    api(app)
      .get(`/api/v1/sessions/${sessionId}/messages/${messageId}/media`)
      .set(bearer(org.adminKey))
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
  /** the inbound message of `waMessageId` as the API lists it, once stored */
  const storedMessage = (waMessageId: string) =>
    waitFor(async () => {
      const res = await api(withStore).get(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey));
      return (res.body.data as Json[]).find((m) => m.waMessageId === waMessageId);
    }, 10000, `message ${waMessageId} in the log`);
  const key = (messageId: string) => ({ organizationId: org.id, sessionId, messageId });

  beforeAll(async () => {
    if (kind === 's3') {
      s3 = await startS3Server(`eager-${process.pid}`);
      storeEnv = s3.env;
      // the in-process API's S3 client reads the standard AWS variables
      for (const [k, v] of Object.entries(S3RVER_CREDENTIALS)) {
        savedEnv[k] = process.env[k];
        process.env[k] = v;
      }
      store = new S3MediaStore({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, prefix: 'media/' });
    } else {
      storeEnv = { MEDIA_STORE: 'postgres' };
      store = new PostgresMediaStore(new MediaBlobsRepository(await testDb()));
    }
    simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    gatewayHealthPort = await freePort();
    sim = await startSim();
    gateway = await startGateway();
    const storeOverrides = Object.fromEntries(Object.entries(storeEnv).filter(([k]) => k.startsWith('MEDIA_STORE')));
    withStore = await createApiApp({ quiet: true, overrides: { NETWORK_SIM_URL: simUrl, ...storeOverrides } });
    withoutStore = await createApiApp({ quiet: true, overrides: { NETWORK_SIM_URL: simUrl, MEDIA_STORE: 'none' } });
    await Promise.all([withStore.init(), withoutStore.init()]);
    org = await seedOrganization(`Eager ${kind}`);
    const created = await api(withStore).post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Eager' });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).qr, 10000, 'a QR');
    await simCall(`/sim/sessions/${sessionId}/scan`, { phoneNumber: '15550001111' });
    await waitFor(async () => (await api(withStore).get(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey))).body.status === 'working', 10000, 'working');
  }, 90000);

  afterAll(async () => {
    await withStore?.close();
    await withoutStore?.close();
    await gateway?.stop();
    await sim?.stop();
    await store?.close();
    await s3?.close();
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await closeTestDataSource();
  });

  it('keeps inbound media without any GET and serves it byte for byte after the network forgot it; without a store that GET is 404', async () => {
    const bytes = Buffer.from(Array.from({ length: 150_000 }, (_, i) => (i * 7 + (i >> 8)) % 256));
    if (s3) await s3.stop();
    const { id: waMessageId } = await simCall(`/sim/sessions/${sessionId}/inbound`, {
      from: FROM,
      type: 'image',
      text: 'kept',
      media: { base64: bytes.toString('base64'), mimetype: 'image/jpeg', filename: 'photo of us.jpg' },
    });
    const message = await storedMessage(waMessageId);
    // the network's ack went out with the row: the download (here: its store is down) holds nothing back
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'the inbound message acked');
    if (s3) {
      expect(await api(withStore).get(`/api/v1/sessions/${sessionId}/messages/${message.id}`).set(bearer(org.adminKey))).toMatchObject({ status: 200 });
      await s3.start();
    }
    // kept by the gateway on its own (retried with backoff while the bucket was away)
    await waitFor(() => store.has(key(message.id)), 20000, 'the media in the store');
    const kept = (await store.get(key(message.id)))!;
    expect(kept).toMatchObject({ mimetype: 'image/jpeg', size: bytes.length, sha256: sha256(bytes) });

    // the network forgets (a restarted simulator holds no media) and the gateway is gone
    const [{ media_ref: ref }] = await (await testDataSource()).query('SELECT media_ref FROM messages WHERE id = $1', [message.id]);
    const onNetwork = () => fetch(`${simUrl}/sim/media/${encodeURIComponent(ref.mediaId)}`).then((r) => r.status);
    expect(await onNetwork()).toBe(200);
    await gateway.stop();
    await sim.stop();
    sim = await startSim();
    expect(await onNetwork()).toBe(404);

    const served = await download(withStore, message.id);
    expect(served.status).toBe(200);
    expect(sha256(served.body as Buffer)).toBe(sha256(bytes));
    expect(served.headers['content-type']).toBe('image/jpeg');
    expect(served.headers['content-length']).toBe(String(bytes.length));
    expect(served.headers['content-disposition']).toBe(`inline; filename*=UTF-8''${encodeURIComponent('photo of us.jpg')}`);

    // the on-demand path alone (MEDIA_STORE=none) asks the network, which no longer has it
    const onDemand = await api(withoutStore).get(`/api/v1/sessions/${sessionId}/messages/${message.id}/media`).set(bearer(org.adminKey));
    expect(onDemand.status).toBe(404);
    expect(onDemand.body.error.code).toBe('not_found');
  }, 90000);

  it('deleting the session forgets its media in the store', async () => {
    gateway = await startGateway();
    const before = await api(withStore).get(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey));
    const withMedia = (before.body.data as Json[]).filter((m) => m.media);
    expect(withMedia.length).toBeGreaterThan(0);
    for (const m of withMedia) expect(await store.has(key(m.id))).toBe(true);
    const deleted = await api(withStore).delete(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey));
    expect(deleted.status).toBe(204);
    for (const m of withMedia) expect(await store.has(key(m.id))).toBe(false);
  }, 60000);
});
