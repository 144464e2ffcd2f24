import 'reflect-metadata';
import { loadConfigOrExit, SimConfig } from '@app/config';
import { createLogger } from '@app/observability';
import { startNetworkSim } from './network-sim';

async function main(): Promise<void> {
  const config = loadConfigOrExit(SimConfig);
  const logger = createLogger('network-sim', config.LOG_LEVEL);
  const sim = await startNetworkSim({
    port: config.SIM_PORT,
    host: config.SIM_HOST,
    qrIntervalMs: config.SIM_QR_INTERVAL_MS,
    logger,
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'network simulator stopping');
    void sim.close().then(() => logger.flush(() => process.exit(0)));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`network simulator failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
