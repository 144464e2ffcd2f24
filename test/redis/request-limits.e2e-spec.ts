import { createRedis, RedisKeys, RequestRateLimits } from '@app/redis';
import { loadRunContext } from '../support/run-context';

/** The API's request limits against the real Redis: several limits of one request are one atomic decision. */
describe('RequestRateLimits', () => {
  const ctx = loadRunContext();
  const redis = createRedis(ctx.redisUrl);
  const limits = new RequestRateLimits(redis, new RedisKeys(`${ctx.redisPrefix}:request-limits-spec`));
  const minute = (limit: number) => ({ limit, windowMs: 60_000 });
  afterAll(async () => {
    await redis.quit();
  });

  it('counts a request against every limit or none: a refusal by one leaves the other uncounted', async () => {
    const both = (ipLimit: number) =>
      limits.hitAll([
        { name: 'ip', subject: '203.0.113.7', window: minute(ipLimit) },
        { name: 'credential', subject: 'key:a', window: minute(3) },
      ]);
    expect(await both(2)).toEqual({ accepted: true });
    expect(await both(2)).toEqual({ accepted: true });
    // the IP is full: refused, named, with a wait inside the minute
    const refused = await both(2);
    expect(refused).toMatchObject({ accepted: false, name: 'ip' });
    expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(50_000);
    // the credential was counted twice, not three times: one more request of it alone is still accepted, then refused
    expect(await limits.hit('credential', 'key:a', minute(3))).toEqual({ accepted: true });
    expect(await limits.hit('credential', 'key:a', minute(3))).toMatchObject({ accepted: false });
  });

  it('names the limit that frees last when both refuse', async () => {
    await limits.hit('credential', 'key:b', { limit: 1, windowMs: 3_600_000 });
    await limits.hit('ip', '198.51.100.1', minute(1));
    const refused = await limits.hitAll([
      { name: 'ip', subject: '198.51.100.1', window: minute(1) },
      { name: 'credential', subject: 'key:b', window: { limit: 1, windowMs: 3_600_000 } },
    ]);
    expect(refused).toMatchObject({ accepted: false, name: 'credential' });
    expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(3_000_000);
  });

  it('prepares for another script the very keys hitAll counts, with the names of its refusals', async () => {
    const request = [
      { name: 'ip', subject: '192.0.2.44', window: minute(5) },
      { name: 'credential', subject: 'key:c', window: minute(5) },
    ];
    const prepared = limits.prepare(request);
    expect(prepared.names).toEqual(['ip', 'credential']);
    // member, then per key: one window of 5 per minute
    expect(prepared.args.slice(1)).toEqual([1, 5, 60_000, 1, 5, 60_000]);
    expect(limits.prepare(request).args[0]).not.toBe(prepared.args[0]);
    await limits.hitAll(request);
    expect(await Promise.all(prepared.keys.map((k) => redis.zcard(k)))).toEqual([1, 1]);
  });
});
