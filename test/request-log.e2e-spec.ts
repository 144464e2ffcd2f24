import { join } from 'node:path';
import { execFileRegistered } from './support/process-registry';
import { freePort, startApp } from './support/processes';
import { REPO_ROOT } from './support/run-context';

/**
 * The log is written a turn after the line is made, in one write per event-loop turn (libs/observability, issue 24
 * item 5): what is still buffered when a process stops must reach its output all the same.
 */
describe('log lines buffered for the end of the turn are written when the process stops', () => {
  it('api: a clean stop (SIGTERM) closes the app, flushes the log and exits 0, the last request line in its output', async () => {
    const port = await freePort();
    const api = await startApp('api', { PORT: String(port), API_OPS_PORT: String(await freePort()), LOG_FORMAT: 'json', LOG_LEVEL: 'info' }, `http://127.0.0.1:${port}/healthz`);
    const requestId = `flush-check-${process.pid}`;
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/webhooks`, { headers: { 'x-request-id': requestId } });
    expect(res.status).toBe(401);
    await api.stop();
    expect({ code: api.child.exitCode, signal: api.child.signalCode }).toEqual({ code: 0, signal: null });
    const lines = api
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; req?: { id?: string } });
    expect(lines.find((l) => l.req?.id === requestId)?.msg).toMatch(/^GET \/api\/v1\/webhooks 401 \d+ms$/);
    // Both lines, in either order: the request line is made on the response's 'close', which can come in a later
    // event-loop turn than the client's receipt of the answer, so the SIGTERM sent after it may be handled first.
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }));
  });

  it('a crash in the very turn that logged: the line is written by the exit hook before the process dies', async () => {
    const script = [
      `const { createLogger } = require(${JSON.stringify(join(REPO_ROOT, 'dist/libs/observability/src'))});`,
      `createLogger('crash-check', 'info', 'json', 1).info('logged just before the crash');`,
      `throw new Error('crash in the same turn');`,
    ].join('\n');
    const crashed = await execFileRegistered(process.execPath, ['-e', script]).then(
      () => null,
      (err: { code?: number; stdout?: string; stderr?: string }) => err,
    );
    expect(crashed?.code).toBe(1);
    expect(crashed?.stderr).toContain('crash in the same turn');
    expect(JSON.parse(String(crashed?.stdout).trim())).toMatchObject({ app: 'crash-check', msg: 'logged just before the crash' });
  });
});
