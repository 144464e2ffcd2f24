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
  // disconnect also stops the reconnect attempts of the connections to nowhere
  afterAll(() => opened.forEach((r) => r.disconnect()));

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
