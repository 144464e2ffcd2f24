import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { GatewayConfig } from '@app/config';
import { LOGGER } from '@app/infra';
import { startupFailureLine, stopOnSignals } from '@app/observability';
import { GatewayModule } from './gateway.module';
import { GatewayNode } from './gateway-node';

async function main(): Promise<void> {
  // the app logs through pino; Nest's own bootstrap lines would only repeat them
  const app = await NestFactory.createApplicationContext(GatewayModule, { logger: false, abortOnError: false });
  const logger = app.get<Logger>(LOGGER);
  for (const warning of app.get(GatewayConfig).warnings) logger.warn(warning);
  const close = async () => {
    await app.close();
    logger.info('gateway stopped');
  };
  stopOnSignals(logger, 15000, close);
  try {
    await app.get(GatewayNode).start();
  } catch (err) {
    process.stderr.write(`${startupFailureLine('gateway', err, 'GATEWAY_HEALTH_PORT')}\n`);
    await app.close().catch(() => undefined);
    logger.flush(() => process.exit(1));
  }
}

main().catch((err) => {
  process.stderr.write(`${startupFailureLine('gateway', err, 'GATEWAY_HEALTH_PORT')}\n`);
  process.exit(1);
});
