import 'reflect-metadata';
import { GatewayConfig, loadConfigOrExit } from '@app/config';
import { createLogger } from '@app/observability';
import { GatewayNode } from './gateway-node';

async function main(): Promise<void> {
  const config = loadConfigOrExit(GatewayConfig);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  for (const warning of config.warnings) logger.warn(warning);
  const node = new GatewayNode(config, logger);
  let exiting = false;
  const shutdown = (signal: string) => {
    if (exiting) return;
    exiting = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15000);
    force.unref();
    node.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err: String(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    await node.start();
  } catch (err) {
    logger.fatal({ err: String(err) }, 'gateway failed to start');
    await node.stop().catch(() => undefined);
    process.exit(1);
  }
}

void main();
