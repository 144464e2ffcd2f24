import { execFileSync } from 'node:child_process';
import { migrate } from '../../libs/database/src/data-source';
import { newRunContext, REPO_ROOT, saveRunContext } from './run-context';

/** scripts/local-services.js, shared with `npm start`: PostgreSQL and Redis of our own when none answers. */
interface LocalServices {
  ensureLocalServices(
    env: NodeJS.ProcessEnv,
    options: { log: (line: string) => void; pgUrlVariable: string; redisUrlVariable: string },
  ): Promise<{ pgBase: string | null; redisUrl: string | null; stop: () => Promise<void> }>;
  LocalServiceError: new (...args: unknown[]) => Error;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is plain Node, shared with `npm start`
const local = require('../../scripts/local-services') as LocalServices;

/** What global-teardown stops (globalSetup and globalTeardown run in jest's own process). */
export const LOCAL_SERVICES = Symbol.for('gw.e2e.localServices');

/**
 * How many e2e projects (e2e, e2e-baileys) set the run up in this jest process: each project runs this hook, the first
 * creates the run and the others share it; global-teardown ends it with the last.
 */
export const RUN_USERS = Symbol.for('gw.e2e.runUsers');

export default async function globalSetup(): Promise<void> {
  const holder = globalThis as Record<symbol, unknown>;
  holder[RUN_USERS] = ((holder[RUN_USERS] as number | undefined) ?? 0) + 1;
  if ((holder[RUN_USERS] as number) > 1) return;
  // a fresh machine: with no TEST_PG_URL / TEST_REDIS_URL and nothing on 5432 / 6379, the run brings its own
  const services = await local
    .ensureLocalServices(process.env, { log: (line) => process.stderr.write(`${line}\n`), pgUrlVariable: 'TEST_PG_URL', redisUrlVariable: 'TEST_REDIS_URL' })
    .catch((err: Error) => {
      if (err instanceof local.LocalServiceError) err.stack = err.message; // one line, what to install
      throw err;
    });
  (globalThis as Record<symbol, unknown>)[LOCAL_SERVICES] = services;
  if (services.pgBase) process.env.TEST_PG_URL = services.pgBase;
  if (services.redisUrl) process.env.TEST_REDIS_URL = services.redisUrl;

  const ctx = newRunContext();
  saveRunContext(ctx);
  await migrate(ctx.databaseUrl);
  // e2e tests run gateways, the simulator and dispatchers as real processes from the build output
  if (process.env.E2E_SKIP_BUILD !== '1') {
    try {
      execFileSync(process.execPath, ['scripts/build.js'], { cwd: REPO_ROOT, stdio: 'inherit' });
    } catch (err) {
      // tsc still emitted; outside CI a type error elsewhere must not block every e2e run
      if (process.env.CI === 'true') throw err;
      process.stderr.write('warning: build reported errors; e2e continues with what was emitted\n');
    }
  }
}
