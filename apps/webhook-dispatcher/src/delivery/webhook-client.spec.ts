import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { WebhookClient } from './webhook-client';

describe('WebhookClient', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/redirect') return res.writeHead(302, { location: '/ok' }).end();
      if (req.url === '/busy') return res.writeHead(503, { 'retry-after': '3' }).end('x'.repeat(10_000));
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses private targets at connect time, for IP literals and for names resolving to them', async () => {
    const client = new WebhookClient({ timeoutMs: 2000, allowPrivateTargets: false });
    const literal = await client.post(`http://127.0.0.1:${port}/ok`, {}, Buffer.from('{}'));
    expect(literal).toMatchObject({ statusCode: null, refused: true, error: 'target address 127.0.0.1 is loopback' });
    const named = await client.post(`http://localhost:${port}/ok`, {}, Buffer.from('{}'));
    expect(named.refused).toBe(true);
    expect(named.error).toMatch(/target address (127\.0\.0\.1|::1) is loopback/);
    const mapped = await client.post(`http://[::ffff:10.0.0.1]:${port}/ok`, {}, Buffer.from('{}'));
    expect(mapped.error).toBe('target address ::ffff:a00:1 is private');
    await client.close();
  });

  it('reaches private targets when allowed, does not follow redirects, keeps 4 KiB of the answer', async () => {
    const client = new WebhookClient({ timeoutMs: 2000, allowPrivateTargets: true });
    expect(await client.post(`http://127.0.0.1:${port}/ok`, {}, Buffer.from('{}'))).toMatchObject({ statusCode: 200, snippet: 'ok', error: null });
    expect(await client.post(`http://127.0.0.1:${port}/redirect`, {}, Buffer.from('{}'))).toMatchObject({ statusCode: 302, error: 'receiver answered 302' });
    const busy = await client.post(`http://127.0.0.1:${port}/busy`, {}, Buffer.from('{}'));
    expect(busy).toMatchObject({ statusCode: 503, retryAfter: '3' });
    expect(busy.snippet).toHaveLength(4096);
    const refused = await client.post(`http://127.0.0.1:1/ok`, {}, Buffer.from('{}'));
    expect(refused).toMatchObject({ statusCode: null, refused: false });
    expect(refused.error).toMatch(/ECONNREFUSED/);
    await client.close();
  });
});

describe('WebhookClient timeout', () => {
  it('gives up on a receiver that never answers once the timeout has passed', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer(() => undefined);
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const client = new WebhookClient({ timeoutMs: 300, allowPrivateTargets: true });
    const result = await client.post(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, {}, Buffer.from('{}'));
    expect(result).toMatchObject({ statusCode: null, error: 'timed out', refused: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    await client.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });
});
