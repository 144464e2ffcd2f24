import { ApiConfig, loadConfigOrExit } from '@app/config';
import { migrate } from '@app/database';
import { startupFailureLine } from '@app/observability';
import { createApiApp } from './bootstrap';
import { OpsPortInUse } from './health/api-ops-server';

async function main(): Promise<void> {
  const config = loadConfigOrExit(ApiConfig);
  // the database is created when missing and migrated before anything reads it
  await migrate(config.DATABASE_URL);
  const app = await createApiApp();
  await app.listen(config.PORT, '0.0.0.0');
}

main().catch((err) => {
  process.stderr.write(`${startupFailureLine('api', err, err instanceof OpsPortInUse ? err.portVariable : 'PORT')}\n`);
  process.exit(1);
});
