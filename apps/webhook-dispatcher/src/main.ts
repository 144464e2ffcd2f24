import 'reflect-metadata';
import { startupFailureLine, stopOnSignals } from '@app/observability';
import { startDispatcher } from './dispatcher.module';

/** In-flight attempts get this long to finish on SIGTERM before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 20_000;

async function main(): Promise<void> {
  const dispatcher = await startDispatcher();
  // deliveries abandoned by a forced exit are redelivered by another dispatcher (lease or pending stream entry)
  stopOnSignals(dispatcher.log, SHUTDOWN_GRACE_MS, () => dispatcher.stop());
}

main().catch((err) => {
  process.stderr.write(`${startupFailureLine('webhook dispatcher', err, 'DISPATCHER_HEALTH_PORT')}\n`);
  process.exit(1);
});
