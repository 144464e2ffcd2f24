import { execFileSync } from 'node:child_process';
import { migrate } from '../../libs/database/src/data-source';
import { newRunContext, REPO_ROOT, saveRunContext } from './run-context';

export default async function globalSetup(): Promise<void> {
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
