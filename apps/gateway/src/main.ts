import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { GatewayConfig } from '@app/config';
import { LOGGER } from '@app/infra';
import { startupFailureLine, stopOnSignals } from '@app/observability';
import { currentSessionId } from './engine/session-context';
import { GatewayModule } from './gateway.module';
import { GatewayMetrics } from './gateway-metrics';
import { GatewayNode } from './gateway-node';
import { SessionHost } from './sessions/session-host';
import { StrayFaults } from './stray-faults';

async function main(): Promise<void> {
  // the app logs through pino; Nest's own bootstrap lines would only repeat them
  const app = await NestFactory.createApplicationContext(GatewayModule, { logger: false, abortOnError: false });
  const logger = app.get<Logger>(LOGGER);
  const config = app.get(GatewayConfig);
  for (const warning of config.warnings) logger.warn(warning);
  const node = app.get(GatewayNode);
  // a stray rejection or exception from inside Baileys must not end the process and every session on it
  const host = app.get(SessionHost);
  const metrics = app.get(GatewayMetrics);
  new StrayFaults({
    logger,
    sessionOf: currentSessionId,
    restartSession: (sessionId) => host.restartAfterFault(sessionId),
    count: (kind, attributed) => metrics.strayFaults.inc({ kind, attributed: String(attributed) }),
  }).install();
  const close = async () => {
    await app.close();
    logger.info('gateway stopped');
  };
  // SIGTERM drains: every session is handed to another gateway before the process exits (0); the forced exit
  // (1) comes only after the grace period the drain itself keeps within. SIGINT (Ctrl-C; what `npm start` sends when
  // the whole stack stops) does not wait for a drain target that will never come: it closes the sessions at once,
  // leases released, for the next start or another gateway's failover
  stopOnSignals(logger, config.GATEWAY_DRAIN_GRACE_MS + 5000, async (signal) => {
    if (signal === 'SIGTERM') await node.drain();
    await close();
  });
  // `gateway:drain` takes the same path as SIGTERM
  node.whenDrainRequested(() => process.kill(process.pid, 'SIGTERM'));
  try {
    await node.start();
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
