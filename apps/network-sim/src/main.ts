import 'reflect-metadata';
import { loadConfigOrExit, SimConfig } from '@app/config';
import { createLogger, stopOnSignals } from '@app/observability';
import { startNetworkSim } from './network-sim';

async function main(): Promise<void> {
  const config = loadConfigOrExit(SimConfig);
  const logger = createLogger('network-sim', config.LOG_LEVEL);
  const sim = await startNetworkSim({
    port: config.SIM_PORT,
    host: config.SIM_HOST,
    qrIntervalMs: config.SIM_QR_INTERVAL_MS,
    keepaliveMs: config.SIM_KEEPALIVE_MS || undefined,
    logger,
  });
  stopOnSignals(logger, 10000, () => sim.close());
}

main().catch((err) => {
  process.stderr.write(`network simulator failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
