import { SendRateLimiter } from '@app/messaging';
import { createRedis, RedisKeys, RequestRateLimits } from '@app/redis';
import { loadRunContext } from '../support/run-context';

/** The per-session send rate, against the real Redis: the script is the whole guarantee, so it is tested alone too. */
describe('SendRateLimiter', () => {
  const ctx = loadRunContext();
  const redis = createRedis(ctx.redisUrl);
  const keys = new RedisKeys(`${ctx.redisPrefix}:rate-spec`);
  const limiter = new SendRateLimiter(redis, keys);
  const requestLimits = new RequestRateLimits(redis, keys);
  afterAll(async () => {
    await redis.quit();
  });

  it('accepts ratePerMin sends, then refuses with the wait until the oldest leaves the 60 s window, counting no refusal', async () => {
    const rates = { ratePerMin: 3, ratePerHour: 100 };
    const accepted = [];
    for (let i = 0; i < 3; i += 1) accepted.push(await limiter.tryAccept('ses_a', `m${i}`, rates));
    expect(accepted.every((d) => d.accepted)).toBe(true);
    const first = (accepted[0] as { at: number }).at;

    const refused = await limiter.tryAccept('ses_a', 'm3', rates);
    expect(refused).toMatchObject({ accepted: false, limit: 'ratePerMin' });
    const wait = (refused as { retryAfterMs: number }).retryAfterMs;
    // the first send leaves the window exactly 60 s after it was counted
    expect(wait).toBeLessThanOrEqual(60_000);
    expect(wait).toBeGreaterThan(60_000 - 5_000);
    expect(first + 60_000 - wait).toBeGreaterThanOrEqual(first);

    // refusals count nothing: still refused with (nearly) the same wait, and releasing one opens a slot
    const again = await limiter.tryAccept('ses_a', 'm4', rates);
    expect(again.accepted).toBe(false);
    await limiter.release('ses_a', 'm2');
    expect((await limiter.tryAccept('ses_a', 'm5', rates)).accepted).toBe(true);
    expect((await limiter.tryAccept('ses_a', 'm6', rates)).accepted).toBe(false);
  });

  it('refuses past ratePerHour with the wait until the oldest leaves the hour, and keeps sessions apart', async () => {
    const rates = { ratePerMin: 100, ratePerHour: 2 };
    expect((await limiter.tryAccept('ses_b', 'x1', rates)).accepted).toBe(true);
    expect((await limiter.tryAccept('ses_b', 'x2', rates)).accepted).toBe(true);
    const refused = await limiter.tryAccept('ses_b', 'x3', rates);
    expect(refused).toMatchObject({ accepted: false, limit: 'ratePerHour' });
    expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(3_600_000 - 5_000);
    // another session has its own windows
    expect((await limiter.tryAccept('ses_c', 'y1', rates)).accepted).toBe(true);
  });

  it('never accepts more than the limit when many callers race', async () => {
    const rates = { ratePerMin: 7, ratePerHour: 100 };
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => limiter.tryAccept('ses_d', `r${i}`, rates)));
    expect(decisions.filter((d) => d.accepted)).toHaveLength(7);
  });

  it('keeps the rates a send read (tryAcceptKept), for the organization only, and drops them on a change; a fill that read before the change keeps nothing', async () => {
    const rates = { ratePerMin: 2, ratePerHour: 100 };
    const miss = await limiter.tryAcceptKept('ses_k', 'org_1', 'k1');
    expect(miss).toMatchObject({ unknown: true });
    expect((await limiter.tryAcceptFilling('ses_k', 'org_1', 'k1', rates, (miss as { gen: string }).gen)).accepted).toBe(true);
    // kept now: the next send is decided by the script alone, and the window is the same one
    expect(await limiter.tryAcceptKept('ses_k', 'org_1', 'k2')).toMatchObject({ accepted: true });
    expect(await limiter.tryAcceptKept('ses_k', 'org_1', 'k3')).toMatchObject({ accepted: false, limit: 'ratePerMin' });
    // another organization's caller counts nothing against this session
    expect(await limiter.tryAcceptKept('ses_k', 'org_2', 'k4')).toEqual({ stranger: true });

    // a change of the rates: dropped, the next send reads the session again
    await limiter.forgetRates('ses_k');
    const after = await limiter.tryAcceptKept('ses_k', 'org_1', 'k5');
    expect(after).toMatchObject({ unknown: true });
    // a fill that read the session before a second change keeps nothing: still unknown afterwards
    await limiter.forgetRates('ses_k');
    expect((await limiter.tryAcceptFilling('ses_k', 'org_1', 'k5', { ratePerMin: 10, ratePerHour: 100 }, (after as { gen: string }).gen)).accepted).toBe(true);
    expect(await limiter.tryAcceptKept('ses_k', 'org_1', 'k6')).toMatchObject({ unknown: true });
  });

  it('counts the request’s API-wide limits first in the same script: a refusal counts nothing anywhere, an accepted request stays counted whatever the send’s answer', async () => {
    const limits = (credentialLimit: number) => [
      { name: 'ip', subject: '198.51.100.9', window: { limit: 100, windowMs: 60_000 } },
      { name: 'credential', subject: 'key:send-spec', window: { limit: credentialLimit, windowMs: 60_000 } },
    ];
    const [ipKey, credentialKey] = requestLimits.prepare(limits(3)).keys;
    const counted = async () => [await redis.zcard(ipKey), await redis.zcard(credentialKey)];

    // no rates kept: the request is counted, the send is left to the caller's fill
    const miss = await limiter.tryAcceptKept('ses_r', 'org_1', 'r1', requestLimits.prepare(limits(3)));
    expect(miss).toMatchObject({ unknown: true });
    expect(await counted()).toEqual([1, 1]);
    expect((await limiter.tryAcceptFilling('ses_r', 'org_1', 'r1', { ratePerMin: 1, ratePerHour: 100 }, (miss as { gen: string }).gen)).accepted).toBe(true);
    expect(await counted()).toEqual([1, 1]);

    // another organization's caller: counted as a request, nothing against the session
    expect(await limiter.tryAcceptKept('ses_r', 'org_2', 'r2', requestLimits.prepare(limits(3)))).toEqual({ stranger: true });
    expect(await counted()).toEqual([2, 2]);
    // refused by the session's rate: the request was still made
    expect(await limiter.tryAcceptKept('ses_r', 'org_1', 'r3', requestLimits.prepare(limits(3)))).toMatchObject({ accepted: false, limit: 'ratePerMin' });
    expect(await counted()).toEqual([3, 3]);

    // the credential is full: refused by name with its wait, counted nowhere (its IP neither, the session neither)
    await limiter.forgetRates('ses_r');
    const refused = await limiter.tryAcceptKept('ses_r', 'org_1', 'r4', requestLimits.prepare(limits(3)));
    expect(refused).toMatchObject({ requestLimited: { name: 'credential' } });
    expect((refused as { requestLimited: { retryAfterMs: number } }).requestLimited.retryAfterMs).toBeGreaterThan(50_000);
    expect(await counted()).toEqual([3, 3]);
    expect(await limiter.tryAcceptKept('ses_r', 'org_1', 'r5')).toMatchObject({ unknown: true });

    // the same decision as the middleware's own hitAll over the same windows
    expect(await requestLimits.hitAll(limits(3))).toMatchObject({ accepted: false, name: 'credential' });
    expect(await requestLimits.hitAll(limits(4))).toEqual({ accepted: true });
    expect(await counted()).toEqual([4, 4]);
  });
});
