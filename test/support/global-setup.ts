import { execFileSync } from 'node:child_process';
import { migrate } from '../../libs/database/src/data-source';
import { newRunContext, REPO_ROOT, saveRunContext } from './run-context';

export default async function globalSetup(): Promise<void> {
  const ctx = newRunContext();
  saveRunContext(ctx);
  await migrate(ctx.databaseUrl);
  // e2e tests run gateways, the simulator and dispatchers as real processes from the build output
  if (process.env.E2E_SKIP_BUILD !== '1') {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
}
