import { ApiConfig, loadConfigOrExit } from '@app/config';
import { migrate } from '@app/database';
import { createLogger, startupFailureLine, stopOnSignals } from '@app/observability';
import { createApiApp } from './bootstrap';
import { OpsPortInUse } from './health/api-ops-server';

/** In-flight requests and the shutdown hooks get this long on SIGTERM (under Kubernetes' default 30 s). */
const SHUTDOWN_GRACE_MS = 25_000;

async function main(): Promise<void> {
  const config = loadConfigOrExit(ApiConfig);
  // the database is created when missing and migrated before anything reads it
  await migrate(config.DATABASE_URL);
  const logger = createLogger('api', config.LOG_LEVEL, config.LOG_FORMAT, 1);
  const app = await createApiApp({ logger });
  await app.listen(config.PORT, '0.0.0.0');
  // like every process here: close the app (its shutdown hooks), then flush the log before exiting, so the last
  // requests' lines, written a turn after their answers, are in the output of a clean stop
  stopOnSignals(logger, SHUTDOWN_GRACE_MS, () => app.close());
}

main().catch((err) => {
  process.stderr.write(`${startupFailureLine('api', err, err instanceof OpsPortInUse ? err.portVariable : 'PORT')}\n`);
  process.exit(1);
});
