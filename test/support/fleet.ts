import { AppProcess, freePort, startApp } from './processes';

/** A gateway process on the simulator's engine, with its health port and readiness URL. */
export async function startSimGateway(simUrl: string, gatewayId: string, env: Record<string, string> = {}): Promise<{ proc: AppProcess; readyUrl: string }> {
  const port = await freePort();
  const proc = await startApp(
    'gateway',
    { GATEWAY_ID: gatewayId, GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: simUrl, GATEWAY_HEALTH_PORT: String(port), RECONNECT_BASE_DELAY_MS: '100', ...env },
    `http://127.0.0.1:${port}/healthz`,
  );
  return { proc, readyUrl: `http://127.0.0.1:${port}/readyz` };
}
