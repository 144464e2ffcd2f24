import 'reflect-metadata';
import { DispatcherConfig, loadConfigOrExit } from '@app/config';
import { createLogger } from '@app/observability';
import { startDispatcher } from './dispatcher';

/** In-flight attempts get this long to finish on SIGTERM before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 20_000;

async function main(): Promise<void> {
  const config = loadConfigOrExit(DispatcherConfig);
  const log = createLogger('webhook-dispatcher', config.LOG_LEVEL);
  for (const warning of config.warnings) log.warn(warning);
  const dispatcher = await startDispatcher(config, log);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // deliveries abandoned by a forced exit keep their lease and are retried by another dispatcher
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    dispatcher.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`webhook dispatcher failed to start: ${err?.stack ?? err}\n`);
  process.exit(1);
});
