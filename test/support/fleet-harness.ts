import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { migrate } from '../../libs/database/src/data-source';
import { E2E_ENGINE, Engine, engineEnv, pairSession } from './engine';
import { AppProcess, startAppOnFreePort, waitFor } from './processes';
import { loadRunContext } from './run-context';

/**
 * A fleet of its own for a test file: a database and a Redis namespace nobody else uses. A fleet supervisor adopts
 * every session whose gateway is gone, so it must not see the sessions other files' gateways left in the run's database.
 * Call `isolateFleet` before importing anything that reads DATABASE_URL or REDIS_KEY_PREFIX.
 */
export function isolateFleet(name: string): { databaseUrl: string; create(): Promise<void>; drop(): Promise<void> } {
  const ctx = loadRunContext();
  // per engine too: `npm test` runs a fleet file on both engines in one process (docs/testing.md)
  const database = `gw_test_${ctx.runId}_${name}_${E2E_ENGINE}_${process.pid}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const databaseUrl = ctx.databaseUrl.replace(/\/[^/]+$/, `/${database}`);
  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_KEY_PREFIX = `${ctx.redisPrefix}:${name}-${E2E_ENGINE}-${process.pid}`;
  return {
    databaseUrl,
    create: async () => void (await migrate(databaseUrl)),
    drop: async () => {
      const admin = new Client({ connectionString: ctx.adminDatabaseUrl });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

export interface FleetGateway {
  id: string;
  proc: AppProcess;
  opsUrl: string;
}

/**
 * Gateways running the matrix pass's engine (E2E_ENGINE, support/engine.ts), or the one a file names, against one
 * simulator, with the supervisor on.
 */
export class SimFleet {
  readonly gateways = new Map<string, FleetGateway>();
  sim!: AppProcess;
  simUrl = '';

  constructor(
    private readonly defaults: Record<string, string> = {},
    private readonly engine: Engine = E2E_ENGINE,
  ) {}

  async startSim(env: Record<string, string> = {}): Promise<void> {
    const url = (port: number) => `http://127.0.0.1:${port}`;
    const { proc, port } = await startAppOnFreePort('sim', (p) => ({ SIM_PORT: String(p), SIM_QR_INTERVAL_MS: '60000', ...env }), (p) => `${url(p)}/healthz`);
    this.sim = proc;
    this.simUrl = url(port);
  }

  async startGateway(id: string, env: Record<string, string> = {}): Promise<FleetGateway> {
    const { proc, port } = await startAppOnFreePort(
      'gateway',
      (p) => ({ GATEWAY_ID: id, GATEWAY_HEALTH_PORT: String(p), ...engineEnv(this.simUrl, { SUPERVISOR_ENABLED: 'true', ...this.defaults, ...env }, this.engine) }),
      (p) => `http://127.0.0.1:${p}/healthz`,
    );
    const gateway = { id, proc, opsUrl: `http://127.0.0.1:${port}` };
    this.gateways.set(id, gateway);
    return gateway;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
  async simGet(path: string): Promise<any> {
    return (await fetch(this.simUrl + path)).json();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
  async simPost(path: string, body: object = {}): Promise<any> {
    const res = await fetch(this.simUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json();
  }

  /**
   * Scans the QR of every session (they must be showing one), in small parallel batches. With `via` (the API and a
   * token) the phone scans the QR the API shows (support/engine.ts pairSession), which both engines accept; without
   * it, the simulator's own QR, which only the sim engine's devices show whole.
   */
  async pair(sessionIds: string[], via?: { api: Parameters<typeof pairSession>[0]['api']; token: string }): Promise<void> {
    const one = (id: string) =>
      via
        ? pairSession({ ...via, simUrl: this.simUrl, sessionId: id, waitWorking: false })
        : waitFor(async () => (await this.simGet(`/sim/sessions/${id}`)).qr, 15000, `a QR for ${id}`).then(() => this.simPost(`/sim/sessions/${id}/scan`));
    for (let i = 0; i < sessionIds.length; i += 20) await Promise.all(sessionIds.slice(i, i + 20).map(one));
  }

  /** A gateway's /metrics text. */
  async metrics(id: string): Promise<string> {
    return (await fetch(`${this.gateways.get(id)!.opsUrl}/metrics`)).text();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.gateways.values()].map((g) => g.proc.stop()));
    await this.sim?.stop();
  }
}

/** The fleet's database, its simulator and first gateways, and the API in-process (the usual start of a fleet file). */
export async function bootFleet(db: { create(): Promise<void> }, fleet: SimFleet, gatewayIds: string[]): Promise<INestApplication> {
  await db.create();
  await fleet.startSim();
  await Promise.all(gatewayIds.map((id) => fleet.startGateway(id)));
  // loaded only now: the API reads DATABASE_URL and REDIS_KEY_PREFIX, which isolateFleet has set by then
  const { createApiApp } = await import('../../apps/api/src/bootstrap');
  const app = await createApiApp();
  await app.init();
  return app;
}

/** A fleet file's world with webhooks: the booted fleet, an organization, and a receiver behind a dispatcher process. */
export interface WebhookedFleet {
  app: INestApplication;
  org: import('./seed').SeededOrg;
  receiver: import('./receivers').Receiver;
  dispatcher: AppProcess;
  /** closes all of it, the fleet's database last */
  close(): Promise<void>;
}

/**
 * `bootFleet`, then an organization whose webhook (subscribed to `events`, at `${receiver.url}${path}`) a dispatcher
 * process delivers to a receiver. Seed and receivers are loaded only now, like the API, after isolateFleet set the env.
 */
export async function bootWebhookedFleet(
  db: { create(): Promise<void>; drop(): Promise<void> },
  fleet: SimFleet,
  gatewayIds: string[],
  orgName: string,
  options: { events?: string[]; path?: string } = {},
): Promise<WebhookedFleet> {
  const app = await bootFleet(db, fleet, gatewayIds);
  const { bearer, closeTestDataSource, seedOrganization } = await import('./seed');
  const { startDispatcherProcess, startReceiver } = await import('./receivers');
  const org = await seedOrganization(orgName);
  const receiver = await startReceiver();
  const dispatcher = await startDispatcherProcess();
  const { checkedRequest } = await import('./api-app');
  const hook = await checkedRequest(app.getHttpServer())
    .post('/api/v1/webhooks')
    .set(bearer(org.adminKey))
    .send({ url: `${receiver.url}${options.path ?? '/hooks'}`, events: options.events ?? ['message.received'] });
  if (hook.status !== 201) throw new Error(`creating the webhook answered ${hook.status}: ${JSON.stringify(hook.body)}`);
  return {
    app,
    org,
    receiver,
    dispatcher,
    close: async () => {
      await app.close();
      await dispatcher.stop();
      await receiver.close();
      await fleet.stopAll();
      await closeTestDataSource();
      await db.drop();
    },
  };
}
