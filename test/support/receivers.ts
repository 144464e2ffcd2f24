import { createServer as createHttpServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { RETRY_POLICY_DEFAULTS, RetryPolicy } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { newId } from '@app/database';
import { WebhookChanges } from '@app/events';
import { RedisKeys } from '@app/redis';
import { AppProcess, freePort, startApp, waitFor } from './processes';

/** One POST as the receiver saw it: the raw bytes, so signatures are checked over what arrived. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
  receivedAt: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** Decides the answer to each request; `nth` counts requests with the same X-Webhook-Request-Id, from 1. */
export type Responder = (req: ReceivedRequest, nth: number) => ReceiverAnswer | Promise<ReceiverAnswer>;

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** requests whose path starts with `path` */
  at(path: string): ReceivedRequest[];
  /** distinct X-Webhook-Request-Id values received under `path` (a deduping receiver's view) */
  distinctIds(path?: string): Set<string>;
  respondWith(responder: Responder): void;
  close(): Promise<void>;
}

export interface TestCa {
  /** PEM file of the CA, for WEBHOOK_CA_FILE */
  caFile: string;
  key: string;
  cert: string;
}

/** A throwaway CA and a server certificate for 127.0.0.1/localhost signed by it. */
export async function createTestCa(): Promise<TestCa & { serverKey: string; serverCert: string }> {
  const ca = await generate([{ name: 'commonName', value: 'Webhook Test CA' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'webhook-ca-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  return { caFile, key: ca.private, cert: ca.cert, serverKey: server.private, serverCert: server.cert };
}

/**
 * A webhook receiver on 127.0.0.1: plain HTTP, or HTTPS with a certificate from `tls`. Records every
 * request and answers 200 unless told otherwise.
 */
export async function startReceiver(tls?: { key: string; cert: string }, port = 0): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const seen = new Map<string, number>();
  let responder: Responder = () => ({ status: 200, body: 'ok' });
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const received: ReceivedRequest = { path: req.url ?? '/', headers: req.headers, rawBody: Buffer.concat(chunks), receivedAt: Date.now() };
      requests.push(received);
      const id = String(req.headers['x-webhook-request-id'] ?? '');
      const key = `${received.path} ${id}`;
      const nth = (seen.get(key) ?? 0) + 1;
      seen.set(key, nth);
      try {
        const answer = await responder(received, nth);
        res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
      } catch {
        res.destroy();
      }
    });
  };
  const server: Server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handler) : createHttpServer(handler);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const boundPort = (server.address() as AddressInfo).port;
  const at = (path: string) => requests.filter((r) => r.path.startsWith(path));
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${boundPort}`,
    port: boundPort,
    requests,
    at,
    distinctIds: (path = '/') => new Set(at(path).map((r) => String(r.headers['x-webhook-request-id']))),
    respondWith: (r) => (responder = r),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

// ---- webhook delivery fixtures: rows as the API would write them, and a dispatcher process ----


export interface WebhookRowInput {
  organizationId: string;
  url: string;
  events?: string[];
  sessionId?: string | null;
  active?: boolean;
  customHeaders?: Record<string, string>;
  retryPolicy?: Partial<RetryPolicy>;
  secret?: string | null;
}

/** Inserts a webhook the way the API stores it (secret sealed) and announces it like the API does. */
export async function createWebhookRow(db: DataSource, redis: Redis | null, input: WebhookRowInput): Promise<string> {
  const id = newId('whk');
  const box = new SecretBox([Buffer.from(process.env.SECRET_ENCRYPTION_KEY!, 'base64')]);
  await db.query(
    `INSERT INTO webhooks (id, organization_id, url, events, session_id, active, custom_headers, retry_policy, secret_encrypted)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9)`,
    [
      id,
      input.organizationId,
      input.url,
      input.events ?? ['*'],
      input.sessionId ?? null,
      input.active ?? true,
      JSON.stringify(input.customHeaders ?? {}),
      JSON.stringify({ ...RETRY_POLICY_DEFAULTS, ...(input.retryPolicy ?? {}) }),
      input.secret ? box.encrypt(input.secret) : null,
    ],
  );
  if (redis) await new WebhookChanges(redis, new RedisKeys(process.env.REDIS_KEY_PREFIX!)).announce(id);
  return id;
}

export async function createSessionRow(db: DataSource, organizationId: string): Promise<string> {
  const id = newId('ses');
  await db.query(`INSERT INTO sessions (id, organization_id, label, status) VALUES ($1, $2, 'test', 'working')`, [id, organizationId]);
  return id;
}

/** The dispatcher from dist/, with short intervals so recovery paths run within a test's patience. */
export async function startDispatcherProcess(env: Record<string, string> = {}): Promise<AppProcess & { opsUrl: string }> {
  const port = await freePort();
  const app = await startApp(
    'dispatcher',
    {
      DISPATCHER_HEALTH_PORT: String(port),
      RECONCILE_INTERVAL_MS: '500',
      DISPATCHER_JOB_LOCK_MS: '2000',
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_CACHE_REFRESH_MS: '1000',
      ...env,
    },
    `http://127.0.0.1:${port}/readyz`,
  );
  return Object.assign(app, { opsUrl: `http://127.0.0.1:${port}` });
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
}

export async function deliveriesOf(db: DataSource, webhookId: string): Promise<DeliveryRow[]> {
  return db.query(`SELECT id, webhook_id, event_id, status, attempts, last_status_code, last_error FROM deliveries WHERE webhook_id = $1 ORDER BY created_at`, [
    webhookId,
  ]);
}

export async function attemptsOf(db: DataSource, deliveryId: string): Promise<{ attempt_no: number; status_code: number | null; error: string | null; started_at: Date }[]> {
  return db.query(`SELECT attempt_no, status_code, error, started_at FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt_no`, [deliveryId]);
}

/** How many of these events are not fanned out: ahead of the reconciler's checkpoint and named by no fan-out row. */
export async function notFannedOut(db: DataSource, eventIds: string[]): Promise<number> {
  const [row] = await db.query(
    `SELECT count(*)::int AS n FROM events e
      WHERE e.id = ANY($1)
        AND e.tx >= (SELECT tx FROM outbox_checkpoints WHERE name = 'webhook-dispatcher')
        AND NOT EXISTS (SELECT 1 FROM event_fanouts f WHERE e.id = ANY(f.event_ids))`,
    [eventIds],
  );
  return row.n;
}

/**
 * After a fault: waits until every event reached `path` and every one of the webhook's `events` rows is `delivered`,
 * then counts what the receiver got and what the log says: POSTs, duplicates (POSTs beyond one per event) and
 * attempt rows (one per POST when nothing was sent without a record).
 */
export async function settledDeliveryCounts(
  db: DataSource,
  receiver: Receiver,
  path: string,
  webhookId: string,
  events: readonly { id: string }[],
): Promise<{ posts: number; duplicates: number; attemptRows: number }> {
  await waitFor(() => receiver.distinctIds(path).size === events.length, 120000, `every event at ${path}`);
  expect(receiver.distinctIds(path)).toEqual(new Set(events.map((e) => e.id)));
  await waitFor(async () => {
    const [row] = await db.query(`SELECT count(*) FILTER (WHERE status = 'delivered')::int AS n FROM deliveries WHERE webhook_id = $1`, [webhookId]);
    return row.n === events.length;
  }, 120000, 'every delivery recorded delivered');
  const posts = receiver.at(path).length;
  const [attempts] = await db.query(
    `SELECT count(*)::int AS n FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
    [webhookId],
  );
  return { posts, duplicates: posts - events.length, attemptRows: attempts.n };
}
