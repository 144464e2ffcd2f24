import { createServer, Server } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { DomainError } from '@app/contracts';
import { MediaFetcher } from './media-fetcher';

describe('MediaFetcher', () => {
  let server: Server;
  let base: string;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/small') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('0123456789'));
      if (req.url === '/declared-big') return res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000, 1));
      if (req.url === '/chunked-big') {
        // no Content-Length: the cap has to be enforced while streaming
        res.writeHead(200);
        for (let i = 0; i < 10; i += 1) res.write(Buffer.alloc(500, 2));
        return res.end();
      }
      if (req.url === '/moved') return res.writeHead(302, { location: '/small' }).end();
      if (req.url === '/missing') return res.writeHead(404).end('no');
      if (req.url === '/silent') return; // never answers
      res.writeHead(500).end();
    });
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const failure = async (p: Promise<unknown>): Promise<DomainError> => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  };

  it('refuses loopback, private and metadata targets when private targets are not allowed, naming the address', async () => {
    const fetcher = new MediaFetcher({ maxBytes: 4096, timeoutMs: 2000, allowPrivateTargets: false });
    const literal = await failure(fetcher.fetch(`${base}/small`));
    expect(literal.code).toBe('validation_error');
    expect(literal.details.fields).toEqual({ 'media.url': ["the media URL's target is not allowed: target address 127.0.0.1 is loopback"] });
    const named = await failure(fetcher.fetch(`http://localhost:${new URL(base).port}/small`));
    expect(named.message).toMatch(/target address (127\.0\.0\.1|::1) is loopback/);
    expect((await failure(fetcher.fetch('http://169.254.169.254/latest/meta-data'))).message).toContain('169.254.169.254 is metadata');
    await fetcher.close();
  });

  it('fetches within the cap when private targets are allowed, following a redirect', async () => {
    const fetcher = new MediaFetcher({ maxBytes: 4096, timeoutMs: 2000, allowPrivateTargets: true });
    expect((await fetcher.fetch(`${base}/small`)).toString()).toBe('0123456789');
    expect((await fetcher.fetch(`${base}/moved`)).toString()).toBe('0123456789');
    await fetcher.close();
  });

  it('answers 413 for media over the cap, declared or streamed', async () => {
    const fetcher = new MediaFetcher({ maxBytes: 4096, timeoutMs: 2000, allowPrivateTargets: true });
    for (const path of ['/declared-big', '/chunked-big']) {
      const err = await failure(fetcher.fetch(`${base}${path}`));
      expect(err.code).toBe('payload_too_large');
      expect(err.details).toMatchObject({ maxBytes: 4096, fields: { 'media.url': ['must be at most 4096 bytes'] } });
    }
    await fetcher.close();
  });

  it('explains an error answer and a URL that does not answer in time', async () => {
    const fetcher = new MediaFetcher({ maxBytes: 4096, timeoutMs: 300, allowPrivateTargets: true });
    expect((await failure(fetcher.fetch(`${base}/missing`))).message).toBe('media could not be fetched: the media URL answered 404');
    const slow = await failure(fetcher.fetch(`${base}/silent`));
    expect(slow.code).toBe('validation_error');
    expect(slow.message).toBe('media could not be fetched: the media URL did not answer within 300 ms');
    await fetcher.close();
  });
});
