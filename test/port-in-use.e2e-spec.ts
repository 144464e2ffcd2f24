import { APP_ENTRY, holdPort, runToExit } from './support/processes';

/** Each app started on a port something else holds prints one line naming the variable to change, and exits. */
describe('a port in use', () => {
  let held: Awaited<ReturnType<typeof holdPort>>;
  beforeAll(async () => void (held = await holdPort()));
  afterAll(() => held.release());

  it.each([
    { app: 'api', entry: APP_ENTRY.api, variable: 'PORT' },
    { app: 'gateway', entry: APP_ENTRY.gateway, variable: 'GATEWAY_HEALTH_PORT' },
    { app: 'webhook dispatcher', entry: APP_ENTRY.dispatcher, variable: 'DISPATCHER_HEALTH_PORT' },
    { app: 'network simulator', entry: APP_ENTRY.sim, variable: 'SIM_PORT' },
  ])('$app: one line naming $variable, nothing else, exit 1', async ({ app, entry, variable }) => {
    const { code, output } = await runToExit(entry, [], {
      [variable]: String(held.port),
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
