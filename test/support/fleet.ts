import { engineEnv } from './engine';
import { AppProcess, freePort, startApp } from './processes';

/** A gateway process on the matrix pass's engine (E2E_ENGINE, support/engine.ts), with its health port and readiness URL. */
export async function startSimGateway(simUrl: string, gatewayId: string, env: Record<string, string> = {}): Promise<{ proc: AppProcess; readyUrl: string }> {
  const port = await freePort();
  const proc = await startApp(
    'gateway',
    { GATEWAY_ID: gatewayId, GATEWAY_HEALTH_PORT: String(port), ...engineEnv(simUrl, { RECONNECT_BASE_DELAY_MS: '100', ...env }) },
    `http://127.0.0.1:${port}/healthz`,
  );
  return { proc, readyUrl: `http://127.0.0.1:${port}/readyz` };
}
