import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import type { lookup as dnsLookup } from 'node:dns';
import { TargetAllowList } from '@app/net-guard';
import { proxyAgentFor, ProxyUnreachableError } from './proxy-agent';

/** the tests' proxies listen on loopback, which only an operator's allow-list lets a session use */
const LOOPBACK_ALLOWED = { allow: TargetAllowList.parse('127.0.0.0/8') };

const portOf = (server: Server | TcpServer) => (server.address() as AddressInfo).port;
const listening = <T extends Server | TcpServer>(server: T) => new Promise<T>((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
const closed = (server: Server | TcpServer) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A WebSocket server standing in for WhatsApp Web: echoes what it gets. */
async function echoServer() {
  const http = await listening(createServer());
  const wss = new WebSocketServer({ server: http });
  wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${data.toString()}`)));
  return { port: portOf(http), close: async () => (wss.close(), closed(http)) };
}

/** A WebSocket through the agent (as Baileys' socket opens it with `agent`): the echo of one message. */
async function roundTrip(url: string, agent: ReturnType<typeof proxyAgentFor>): Promise<string> {
  const ws = new WebSocket(url, { agent });
  try {
    await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
    const reply = new Promise<string>((resolve) => ws.once('message', (data) => resolve(data.toString())));
    ws.send('hello');
    return await reply;
  } finally {
    ws.close();
  }
}

function pipe(a: Socket, b: Socket) {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}

describe('proxyAgentFor (issue 19 item 10)', () => {
  it('tunnels the socket through an HTTP proxy with CONNECT, with its credentials', async () => {
    const target = await echoServer();
    const seen: Array<{ method: string; url: string; auth?: string }> = [];
    const proxy = await listening(createServer());
    proxy.on('connect', (req, client: Socket, head: Buffer) => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers['proxy-authorization'] });
      const [host, port] = req.url!.split(':');
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        pipe(client, upstream);
      });
    });
    try {
      const agent = proxyAgentFor(`http://user:s3cret@127.0.0.1:${portOf(proxy)}`, LOOPBACK_ALLOWED);
      expect(agent).toBeInstanceOf(HttpsProxyAgent);
      expect(await roundTrip(`ws://127.0.0.1:${target.port}/ws/chat`, agent)).toBe('echo hello');
      expect(seen).toEqual([{ method: 'CONNECT', url: `127.0.0.1:${target.port}`, auth: `Basic ${Buffer.from('user:s3cret').toString('base64')}` }]);
    } finally {
      await closed(proxy);
      await target.close();
    }
  });

  it('tunnels the socket through a SOCKS5 proxy', async () => {
    const target = await echoServer();
    const asked: string[] = [];
    // the smallest SOCKS5 server: no authentication, CONNECT to an IPv4 address or a domain name
    const proxy = await listening(
      createTcpServer((client) => {
        client.once('data', () => {
          client.write(Buffer.from([5, 0]));
          client.once('data', (req: Buffer) => {
            const type = req[3];
            const host = type === 1 ? [...req.subarray(4, 8)].join('.') : req.subarray(5, 5 + req[4]).toString();
            const port = req.readUInt16BE(req.length - 2);
            asked.push(`${host}:${port}`);
            const upstream = connect(port, host, () => {
              client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
              pipe(client, upstream);
            });
          });
        });
      }),
    );
    try {
      const agent = proxyAgentFor(`socks5://127.0.0.1:${portOf(proxy)}`, LOOPBACK_ALLOWED);
      expect(agent).toBeInstanceOf(SocksProxyAgent);
      expect(await roundTrip(`ws://127.0.0.1:${target.port}/ws/chat`, agent)).toBe('echo hello');
      expect(asked).toEqual([`127.0.0.1:${target.port}`]);
    } finally {
      await closed(proxy);
      await target.close();
    }
  });

  it('refuses a scheme it cannot proxy rather than connecting directly', () => {
    expect(() => proxyAgentFor('ftp://127.0.0.1:21')).toThrow('unsupported proxy scheme ftp');
  });

  describe('the address guard (issue 37)', () => {
    /** A loopback listener standing in for an internal service: counts the connections it gets. */
    async function internalService() {
      let connections = 0;
      const server = await listening(createTcpServer((socket) => ((connections += 1), socket.destroy())));
      return { port: portOf(server), connections: () => connections, close: () => closed(server) };
    }
    /** A resolver that answers 127.0.0.1 for every name: a DNS name rebound to loopback after it was saved. */
    const rebound = ((_host: string, _opts: unknown, callback: (err: null, addresses: Array<{ address: string; family: number }>) => void) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }])) as unknown as typeof dnsLookup;
    /** What a WebSocket through the agent ends with: the error it fails with. */
    const failureOf = (agent: ReturnType<typeof proxyAgentFor>) =>
      new Promise<Error>((resolve) => {
        const ws = new WebSocket('ws://127.0.0.1:9/ws/chat', { agent });
        ws.once('open', () => resolve(new Error('opened')));
        ws.once('error', resolve);
      });

    it.each(['http', 'https', 'socks5', 'socks4a'])('%s: a loopback literal or a name that resolves to loopback opens no connection', async (scheme) => {
      const service = await internalService();
      try {
        const failures: ProxyUnreachableError[] = [];
        const onFailure = (err: ProxyUnreachableError) => failures.push(err);
        for (const url of [`${scheme}://127.0.0.1:${service.port}`, `${scheme}://u:p@[::ffff:7f00:1]:${service.port}`, `${scheme}://proxy.rebind.test:${service.port}`]) {
          const err = await failureOf(proxyAgentFor(url, { lookup: rebound, onFailure }));
          // the tenant's reason is the one generic word; the address is only in the detail the gateway logs
          expect(err.message).toBe('proxy_unreachable');
          expect(err.message).not.toContain(String(service.port));
        }
        expect(failures.map((f) => f.detail)).toEqual([
          'proxy target address 127.0.0.1 is loopback',
          'proxy target address ::ffff:7f00:1 is loopback',
          'target address 127.0.0.1 is loopback',
        ]);
        expect(service.connections()).toBe(0);
      } finally {
        await service.close();
      }
    });

    it('connects to a private proxy the operator allowed, by range or by name', async () => {
      const service = await internalService();
      try {
        await failureOf(proxyAgentFor(`http://proxy.rebind.test:${service.port}`, { lookup: rebound, allow: TargetAllowList.parse('proxy.rebind.test') }));
        await failureOf(proxyAgentFor(`socks5://127.0.0.1:${service.port}`, LOOPBACK_ALLOWED));
        expect(service.connections()).toBe(2);
      } finally {
        await service.close();
      }
    });

    it('says proxy_unreachable for a refused CONNECT and a closed port, never the status, the address or the socket error', async () => {
      const proxy = await listening(createServer());
      proxy.on('connect', (_req, client: Socket) => client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n'));
      const closedPort = await internalService();
      await closedPort.close();
      try {
        const details: string[] = [];
        const onFailure = (err: ProxyUnreachableError) => details.push(err.detail);
        expect((await failureOf(proxyAgentFor(`http://127.0.0.1:${portOf(proxy)}`, { ...LOOPBACK_ALLOWED, onFailure }))).message).toBe('proxy_unreachable');
        expect((await failureOf(proxyAgentFor(`http://127.0.0.1:${closedPort.port}`, { ...LOOPBACK_ALLOWED, onFailure }))).message).toBe('proxy_unreachable');
        expect(details[0]).toBe('the proxy answered CONNECT with 407');
        expect(details[1]).toContain('ECONNREFUSED');
      } finally {
        await closed(proxy);
      }
    });
  });
});
