import { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { keepSocketAlive } from './keepalive';

describe('keepSocketAlive (the network drops a client that went silent)', () => {
  let wss: WebSocketServer;
  let url: string;
  const silentSockets = new Set<number>();
  let nextIndex = 0;
  const clients: WebSocket[] = [];

  beforeEach(async () => {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => wss.once('listening', resolve));
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    wss.on('connection', (ws) => {
      const index = nextIndex++;
      keepSocketAlive(ws, 40, () => silentSockets.has(index));
    });
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });

  const connect = async (autoPong: boolean) => {
    const ws = new WebSocket(url, { autoPong });
    clients.push(ws);
    await new Promise((resolve) => ws.once('open', resolve));
    return ws;
  };
  const closed = (ws: WebSocket) => new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : ws.once('close', () => resolve())));
  const pings = (ws: WebSocket, n: number) =>
    new Promise<void>((resolve) => {
      let seen = 0;
      ws.on('ping', () => ++seen === n && resolve());
    });

  it('keeps a client that answers pings, and ends one that answers nothing (a frozen process)', async () => {
    const healthy = await connect(true);
    const frozen = await connect(false);
    const healthyPings = pings(healthy, 4);
    await closed(frozen);
    await healthyPings;
    expect(healthy.readyState).toBe(WebSocket.OPEN);
  });

  it('counts a frame as an answer too, and leaves a socket under the silent fault alone', async () => {
    nextIndex = 0;
    silentSockets.clear();
    silentSockets.add(0);
    const silenced = await connect(false);
    const talking = await connect(false);
    // a client that sends a frame on every ping stays, though it never pongs
    talking.on('ping', () => talking.send('x'));
    const frozen = await connect(false);
    const talkingPings = pings(talking, 4);
    await closed(frozen);
    await talkingPings;
    expect(talking.readyState).toBe(WebSocket.OPEN);
    expect(silenced.readyState).toBe(WebSocket.OPEN);
  });
});
