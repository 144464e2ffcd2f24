import { createServer, Server, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { InboundSpool, InboundSpoolMetrics, SpoolMedium } from '@app/messaging';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { loadRunContext } from '../support/run-context';

/** Counts what the spool reports, as the gateway's metrics would. */
function countingMetrics() {
  const counts: Record<string, number> = {};
  const bump = (name: string) => (counts[name] = (counts[name] ?? 0) + 1);
  const metrics: InboundSpoolMetrics = {
    appended: (medium: SpoolMedium) => bump(`appended:${medium}`),
    removed: (medium: SpoolMedium) => bump(`removed:${medium}`),
    replayed: (n: number) => void (counts.replayed = (counts.replayed ?? 0) + n),
    overflowed: (medium: SpoolMedium) => bump(`overflowed:${medium}`),
  };
  return { counts, metrics };
}

const quiet = { warn: () => undefined, error: () => undefined };

/** The inbound spool against the real Redis: two "gateways" are two clients and two spools over the same keys. */
describe('InboundSpool', () => {
  const ctx = loadRunContext();
  const keys = new RedisKeys(`${ctx.redisPrefix}:inbound-spool-spec`);
  const clients: Redis[] = [];
  const client = (options: Parameters<typeof createRedis>[1] = {}) => {
    const redis = createRedis(ctx.redisUrl, options);
    clients.push(redis);
    return redis;
  };
  const ready = async (redis: Redis) => {
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  };
  let blackHole: Server | null = null;
  const held: Socket[] = [];

  afterAll(async () => {
    // a client of the silent server would wait for ever on QUIT: every client is dropped at once
    for (const c of clients) c.disconnect();
    for (const s of held) s.destroy();
    await new Promise((resolve) => (blackHole ? blackHole.close(resolve) : resolve(undefined)));
  });

  it('keeps an entry from append until it is removed, and another gateway sees it meanwhile', async () => {
    const a = client();
    const b = client();
    await Promise.all([ready(a), ready(b)]);
    const { counts, metrics } = countingMetrics();
    const gatewayA = new InboundSpool(a, keys, { metrics, logger: quiet });
    const gatewayB = new InboundSpool(b, keys, { logger: quiet });

    const first = gatewayA.append('ses_1', '{"n":1}');
    const second = gatewayA.append('ses_1', '{"n":2 "ü"}');
    gatewayA.append('ses_2', '{"other":"session"}');
    await expect(first.durable).resolves.toBe(true);
    await expect(second.durable).resolves.toBe(true);
    expect(first.id).toMatch(/^\d+-\d+$/);
    expect(await a.xlen(keys.key('inbound-spool:ses_1'))).toBe(2);
    // the stream expires if the session is never connected again (deleted): a TTL is set on every append
    expect(await a.pttl(keys.key('inbound-spool:ses_1'))).toBeGreaterThan(13 * 24 * 3600_000);

    // the session moves: the other gateway drains it, oldest first, byte for byte
    const spooled = await gatewayB.pending('ses_1');
    expect(spooled.map((s) => s.payload)).toEqual(['{"n":1}', '{"n":2 "ü"}']);
    expect(spooled.map((s) => s.entry.id)).toEqual([first.id, second.id]);
    gatewayB.remove(spooled[0].entry);
    gatewayB.remove(spooled[0].entry); // idempotent

    // the first gateway removes what it handed over itself
    gatewayA.remove(second);
    await a.ping(); // XDEL is sent without waiting; a later command on the same connection runs after it
    await b.ping();
    expect(await gatewayA.pending('ses_1')).toEqual([]);
    expect((await gatewayA.pending('ses_2')).map((s) => s.payload)).toEqual(['{"other":"session"}']);
    expect(counts).toMatchObject({ 'appended:redis': 3, 'removed:redis': 1, replayed: 1 });

    const measured = await gatewayA.measure();
    expect(measured).toMatchObject({ sessions: 1, entries: 1 });
    expect(measured.bytes).toBeGreaterThan(0);
  });

  it('refuses appends at the cap (counted), and takes them again once entries are removed', async () => {
    const redis = client();
    await ready(redis);
    const { counts, metrics } = countingMetrics();
    const spool = new InboundSpool(redis, keys, { maxEntries: 3, metrics, logger: quiet });
    const entries = ['a', 'b', 'c', 'd'].map((p) => spool.append('ses_cap', p));
    expect(await Promise.all(entries.map((e) => e.durable))).toEqual([true, true, true, false]);
    expect(entries[3].id).toBeNull();
    expect(await redis.xlen(keys.key('inbound-spool:ses_cap'))).toBe(3);
    expect(counts['overflowed:redis']).toBe(1);
    spool.remove(entries[0]);
    spool.remove(entries[3]); // never spooled: nothing to remove
    await expect(spool.append('ses_cap', 'e').durable).resolves.toBe(true);
    expect((await spool.pending('ses_cap')).map((s) => s.payload)).toEqual(['b', 'c', 'e']);
  });

  it('while Redis is unreachable, holds entries in memory (bounded), and moves them to Redis once it is back', async () => {
    const redis = client();
    await ready(redis);
    const { counts, metrics } = countingMetrics();
    const spool = new InboundSpool(redis, keys, { memoryMaxEntries: 2, metrics, logger: quiet });
    redis.disconnect(); // Redis gone for this gateway
    const held = ['x', 'y', 'z'].map((p) => spool.append('ses_down', p));
    expect(await Promise.all(held.map((e) => e.durable))).toEqual([true, true, false]);
    expect(held[0].id).toBe('memory:1');
    expect(spool.memoryStats()).toEqual({ entries: 2, bytes: 2 });
    expect(counts).toMatchObject({ 'appended:memory': 2, 'overflowed:memory': 1 });
    // a reconnect on this gateway while Redis is still away replays from memory
    expect((await spool.pending('ses_down')).map((s) => s.payload)).toEqual(['x', 'y']);
    spool.remove(held[0]);
    expect(spool.memoryStats().entries).toBe(1);

    await redis.connect();
    await ready(redis);
    // the next read moves what memory holds into Redis: a crash of this process or a move no longer strands it
    const back = await spool.pending('ses_down');
    expect(back.map((s) => s.payload)).toEqual(['y']);
    expect(back[0].entry.id).toMatch(/^\d+-\d+$/);
    expect(spool.memoryStats().entries).toBe(0);
    // another gateway, its client still connecting: it is asked anyway
    const other = new InboundSpool(client(), keys, { logger: quiet });
    expect((await other.pending('ses_down')).map((s) => s.payload)).toEqual(['y']);
    // removing the entry through the handle the gateway held since the outage removes the Redis copy
    spool.remove(held[1]);
    await redis.ping();
    expect(await redis.xlen(keys.key('inbound-spool:ses_down'))).toBe(0);
  });

  it('a Redis that takes the write but never answers falls back to memory after the timeout', async () => {
    // a server that answers the client's hello (CLIENT SETINFO) and then never says a word: the client is "ready"
    // (no ready check), every command hangs
    blackHole = createServer((socket) => {
      held.push(socket);
      socket.on('data', (data) => socket.write('+OK\r\n'.repeat(data.toString().match(/SETINFO/gi)?.length ?? 0)));
    });
    await new Promise<void>((resolve) => blackHole!.listen(0, '127.0.0.1', resolve));
    const { port } = blackHole.address() as AddressInfo;
    const silent = createRedis(`redis://127.0.0.1:${port}`, { enableReadyCheck: false });
    clients.push(silent);
    await ready(silent);
    const spool = new InboundSpool(silent, keys, { timeoutMs: 200, logger: quiet });
    const entry = spool.append('ses_silent', 'p');
    await expect(entry.durable).resolves.toBe(true);
    expect(entry.id).toBe('memory:1');
    // the read times out the same way: what memory holds is still replayed
    expect((await spool.pending('ses_silent')).map((s) => s.payload)).toEqual(['p']);
  });
});
