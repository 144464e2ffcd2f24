import 'reflect-metadata';
import { loadConfigOrExit, SimConfig } from '@app/config';
import { createLogger, startupFailureLine, stopOnSignals } from '@app/observability';
import { startNetworkSim } from './network-sim';

async function main(): Promise<void> {
  const config = loadConfigOrExit(SimConfig);
  const logger = createLogger('network-sim', config.LOG_LEVEL, config.LOG_FORMAT);
  const sim = await startNetworkSim({
    port: config.SIM_PORT,
    host: config.SIM_HOST,
    qrIntervalMs: config.SIM_QR_INTERVAL_MS,
    keepaliveMs: config.SIM_KEEPALIVE_MS || undefined,
    editWindowMs: config.SIM_EDIT_WINDOW_MS,
    prelink: config.SIM_TEST_PRELINK,
    logger,
  });
  stopOnSignals(logger, 10000, () => sim.close());
}

main().catch((err) => {
  process.stderr.write(`${startupFailureLine('network simulator', err, 'SIM_PORT')}\n`);
  process.exit(1);
});
