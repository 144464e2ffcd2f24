import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { proxyAgentFor } from './proxy-agent';

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
      const agent = proxyAgentFor(`http://user:s3cret@127.0.0.1:${portOf(proxy)}`);
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
      const agent = proxyAgentFor(`socks5://127.0.0.1:${portOf(proxy)}`);
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
});
