import 'reflect-metadata';
import { DispatcherConfig, loadConfigOrExit } from '@app/config';
import { createLogger, stopOnSignals } from '@app/observability';
import { startDispatcher } from './dispatcher';

/** In-flight attempts get this long to finish on SIGTERM before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 20_000;

async function main(): Promise<void> {
  const config = loadConfigOrExit(DispatcherConfig);
  const log = createLogger('webhook-dispatcher', config.LOG_LEVEL);
  for (const warning of config.warnings) log.warn(warning);
  const dispatcher = await startDispatcher(config, log);
  // deliveries abandoned by a forced exit are redelivered by another dispatcher (lease or pending stream entry)
  stopOnSignals(log, SHUTDOWN_GRACE_MS, () => dispatcher.stop());
}

main().catch((err) => {
  process.stderr.write(`webhook dispatcher failed to start: ${err?.stack ?? err}\n`);
  process.exit(1);
});
