import { Client } from 'pg';
import { migrate } from '@app/database';
import { APP_ENTRY, holdPort, runToExit } from './support/processes';
import { loadRunContext } from './support/run-context';

// an empty database of its own: the apps do their usual work before the port, and must not touch other suites' rows
const ctx = loadRunContext();
const databaseUrl = `${ctx.databaseUrl}_ports_${process.pid}`;

/** Each app started on a port something else holds prints one line naming the variable to change, and exits. */
describe('a port in use', () => {
  let held: Awaited<ReturnType<typeof holdPort>>;
  beforeAll(async () => {
    held = await holdPort();
    await migrate(databaseUrl);
  });
  afterAll(async () => {
    await held.release();
    const admin = new Client({ connectionString: ctx.adminDatabaseUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseUrl.split('/').pop()}" WITH (FORCE)`);
    await admin.end();
  });

  it.each([
    { app: 'api', entry: APP_ENTRY.api, variable: 'PORT' },
    { app: 'api', entry: APP_ENTRY.api, variable: 'API_OPS_PORT' },
    { app: 'gateway', entry: APP_ENTRY.gateway, variable: 'GATEWAY_HEALTH_PORT' },
    { app: 'webhook dispatcher', entry: APP_ENTRY.dispatcher, variable: 'DISPATCHER_HEALTH_PORT' },
    { app: 'network simulator', entry: APP_ENTRY.sim, variable: 'SIM_PORT' },
  ])('$app: one line naming $variable, nothing else, exit 1', async ({ app, entry, variable }) => {
    const { code, output } = await runToExit(entry, [], {
      [variable]: String(held.port),
      DATABASE_URL: databaseUrl,
      GATEWAY_ID: `gw-port-in-use-${process.pid}`,
      GATEWAY_ENGINE: 'sim',
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}:port-in-use-${process.pid}`,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([`${app}: port ${held.port} is already in use; set ${variable} to a free port (or stop what listens there)`]);
  }, 30000);
});
