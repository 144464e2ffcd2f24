import { AddressInfo, createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A TCP relay in front of a service, that a test can cut (every connection ends, new ones are refused: a network
 * outage as the client sees it) and restore on the same port, or freeze (connections stay open and nothing passes
 * either way: a partition, or a service that stopped answering). The target is read per connection, so the relay can
 * be listening before the service's port is known.
 */
export class TcpOutage {
  private server: Server | null = null;
  /** each relayed connection: client and upstream, until the upstream side closes (either side's close ends both) */
  private readonly pairs = new Set<[Socket, Socket]>();
  private frozen = false;
  port = 0;

  constructor(private readonly target: () => { host: string; port: number }) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (on a free port the first time, on the same one after a cut); nothing to do while up. */
  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = createConnection(this.target());
      for (const s of [client, upstream]) s.on('error', () => undefined);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      if (!this.frozen) relay(pair);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => {
        client.destroy();
        this.pairs.delete(pair);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Nothing passes on any connection, open or new, until `thaw()`: what is sent meanwhile waits in the relay. */
  freeze(): void {
    this.frozen = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
    }
  }

  thaw(): void {
    if (!this.frozen) return;
    this.frozen = false;
    for (const pair of this.pairs) relay(pair);
  }

  /** The outage: every relayed connection is torn down and the port refuses new ones until `start()`. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const pair of this.pairs) pair.forEach((s) => s.destroy());
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function relay([client, upstream]: [Socket, Socket]): void {
  client.pipe(upstream);
  upstream.pipe(client);
}
