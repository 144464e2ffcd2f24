import { createRedis, createRequestPathRedis, Redis } from '@app/redis';
import { isStoreUnreachable } from '@app/infra';
import { freePort } from '../support/processes';

/**
 * The two kinds of Redis connection while Redis is unreachable (a port nothing listens on): a request-path command
 * fails by itself with an error the API answers as 503 `unavailable`; a background command keeps waiting for Redis.
 */
describe('createRequestPathRedis: a request-path command fails fast while Redis is away', () => {
  const opened: Redis[] = [];
  const open = (redis: Redis) => {
    redis.on('error', () => undefined);
    opened.push(redis);
    return redis;
  };
  // disconnect stops the reconnect attempts; the socket is gone at `end`
  const closed = (r: Redis) => (r.status === 'end' ? Promise.resolve() : new Promise<void>((resolve) => r.once('end', () => resolve())));
  afterAll(async () => {
    const ends = opened.map(closed);
    opened.forEach((r) => r.disconnect());
    await Promise.all(ends);
  });

  it('answers like any connection while Redis is there', async () => {
    expect(await open(createRequestPathRedis(process.env.REDIS_URL!)).ping()).toBe('PONG');
  });

  it('rejects a command with an outage error when nothing answers, while a background connection is still waiting', async () => {
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    const background = open(createRedis(nowhere));
    const backgroundOutcome = background.ping().then(
      () => 'answered',
      () => 'failed',
    );
    const failure = await open(createRequestPathRedis(nowhere))
      .ping()
      .then(() => null, (err: Error) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(isStoreUnreachable(failure)).toBe(true);
    expect(await Promise.race([backgroundOutcome, Promise.resolve('still waiting')])).toBe('still waiting');
  });
});
