import 'reflect-metadata';
import { GatewayConfig, loadConfigOrExit } from '@app/config';
import { createLogger, stopOnSignals } from '@app/observability';
import { GatewayNode } from './gateway-node';

async function main(): Promise<void> {
  const config = loadConfigOrExit(GatewayConfig);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  for (const warning of config.warnings) logger.warn(warning);
  const node = new GatewayNode(config, logger);
  stopOnSignals(logger, 15000, () => node.stop());
  try {
    await node.start();
  } catch (err) {
    logger.fatal({ err: String(err) }, 'gateway failed to start');
    await node.stop().catch(() => undefined);
    process.exit(1);
  }
}

void main();
