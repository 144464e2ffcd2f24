import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';

export interface OpsServerOptions {
  port: number;
  /** the address to bind; this host only unless the caller names another (OPS_HOST) */
  host?: string;
  registry: Registry;
  /** true when every dependency (PostgreSQL, Redis, …) answers */
  ready: () => Promise<boolean>;
}

/**
 * Health and metrics for the processes that have no public API (gateway, dispatcher):
 * GET /healthz (alive), /readyz (dependencies), /metrics (Prometheus text).
 */
export async function startOpsServer(options: OpsServerOptions): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (req.method === 'GET' && path === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
      } else if (req.method === 'GET' && path === '/readyz') {
        const ok = await options.ready().catch(() => false);
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ready' : 'not_ready' }));
      } else if (req.method === 'GET' && path === '/metrics') {
        res.writeHead(200, { 'content-type': options.registry.contentType }).end(await options.registry.metrics());
      } else {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: 'not_found', message: 'no such route', details: {} } }));
      }
    } catch {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'internal', message: 'internal error', details: {} } }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
