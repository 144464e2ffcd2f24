import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChatwootCallError, ChatwootClient } from './chatwoot-client';

/**
 * The address guard at connect time (docs/security.md): an integration row aimed at a private address past the API's
 * check (written before a policy change, or a name that resolves privately later) opens no connection.
 */
describe('ChatwootClient address guard', () => {
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":4,"name":"inbox","channel_type":"Channel::Api"}'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const account = (host: string) => ({ baseUrl: `http://${host}:${port}`, accountId: 1, token: 't' });

  it('refuses a loopback Chatwoot in any spelling and opens no connection, unless private targets are allowed', async () => {
    const guarded = new ChatwootClient({ timeoutMs: 2000, allowPrivateTargets: false });
    try {
      for (const host of ['127.0.0.1', '127.1', '0x7f000001', '2130706433']) {
        const err = await guarded.inbox(account(host), 4).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ChatwootCallError);
        expect((err as ChatwootCallError).refused).toBe(true);
      }
      expect(connections).toBe(0);
    } finally {
      await guarded.close();
    }
    // the same listener is reachable when the operator allows private targets: the refusal above was the guard's
    const open = new ChatwootClient({ timeoutMs: 2000, allowPrivateTargets: true });
    try {
      await expect(open.inbox(account('127.0.0.1'), 4)).resolves.toMatchObject({ id: 4 });
      expect(connections).toBe(1);
    } finally {
      await open.close();
    }
  });
});
