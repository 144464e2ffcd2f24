import { AppProcess, APP_ENTRY, freePort, startApp } from './support/processes';

/**
 * OPS_HOST (issue 22 item 7): every app's ops port (/healthz, /readyz, /metrics) listens on the address the operator
 * sets and nowhere else. 127.0.0.2 is a loopback address of its own on Linux, so "bound there only" shows as an
 * answer on 127.0.0.2 and a refused connection on 127.0.0.1, the same port.
 */
const OPS_HOST = '127.0.0.2';

async function answers(url: string): Promise<number | 'refused'> {
  try {
    return (await fetch(url)).status;
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    if (code === 'ECONNREFUSED') return 'refused';
    throw err;
  }
}

describe('OPS_HOST: the ops port binds to the operator\'s address', () => {
  const started: AppProcess[] = [];
  afterAll(async () => {
    for (const app of started.reverse()) await app.stop();
  });

  it.each([
    ['api', 'API_OPS_PORT'],
    ['gateway', 'GATEWAY_HEALTH_PORT'],
    ['dispatcher', 'DISPATCHER_HEALTH_PORT'],
  ] as Array<[keyof typeof APP_ENTRY, string]>)('%s: /metrics and /healthz on OPS_HOST, nothing on another address', async (app, portVariable) => {
    const opsPort = await freePort();
    const env: Record<string, string> = { OPS_HOST, [portVariable]: String(opsPort) };
    if (app === 'api') env.PORT = String(await freePort());
    if (app === 'gateway') Object.assign(env, { GATEWAY_ID: `gw-ops-host-${process.pid}`, GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: 'http://127.0.0.1:9' });
    const proc = await startApp(app, env, `http://${OPS_HOST}:${opsPort}/healthz`);
    started.push(proc);
    expect(await answers(`http://${OPS_HOST}:${opsPort}/metrics`)).toBe(200);
    expect(await answers(`http://127.0.0.1:${opsPort}/metrics`)).toBe('refused');
  });

  it('without OPS_HOST the ops port is on 127.0.0.1 only: another address of the host is refused (issue 37 item 6)', async () => {
    const opsPort = await freePort();
    const env = { DISPATCHER_HEALTH_PORT: String(opsPort) };
    expect(process.env.OPS_HOST).toBeUndefined();
    const proc = await startApp('dispatcher', env, `http://127.0.0.1:${opsPort}/healthz`);
    started.push(proc);
    expect(await answers(`http://127.0.0.1:${opsPort}/metrics`)).toBe(200);
    expect(await answers(`http://${OPS_HOST}:${opsPort}/metrics`)).toBe('refused');
  });
});
