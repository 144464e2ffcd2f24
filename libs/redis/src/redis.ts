import IORedis, { Redis, RedisOptions } from 'ioredis';

/**
 * All Redis keys of one deployment (or one test run) live under one prefix, so runs never collide
 * and an operator can see or delete exactly this deployment's keys.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}
  key(name: string): string {
    return `${this.prefix}:${name}`;
  }
  /** BullMQ's own prefix option (it appends `:<queue>:…`). */
  get bullPrefix(): string {
    return `${this.prefix}:bull`;
  }
}

/**
 * A connection for background work (BullMQ workers, blocking stream reads, leases, the outbox): while Redis is away a
 * command waits in ioredis' offline queue and runs once it is back. BullMQ refuses a blocking connection that gives up.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new IORedis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    lazyConnect: false,
    ...options,
  });
}

/**
 * The longest a request-path command waits for Redis: what bounds a Redis that holds the connection but does not answer
 * (a stopped one is refused at the next reconnect attempt, within 500 ms). Not tighter: a busy event loop that reads
 * a reply late would turn it into a spurious 503.
 */
export const REQUEST_PATH_COMMAND_TIMEOUT_MS = 5000;

/**
 * A connection that serves requests (the API's shared client): while Redis is away a command fails fast instead of
 * holding the request until Redis is back. Queued commands fail at the next failed reconnect (tried at least every
 * 500 ms), and no command waits longer than REQUEST_PATH_COMMAND_TIMEOUT_MS (5 s); the caller's answer is 503 `unavailable`.
 * Never for blocking commands (XREAD BLOCK, BullMQ workers): those take `createRedis`.
 */
export function createRequestPathRedis(url: string, options: RedisOptions = {}): Redis {
  return createRedis(url, {
    maxRetriesPerRequest: 0,
    commandTimeout: REQUEST_PATH_COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
    ...options,
  });
}

/**
 * A Lua script as a command of `redis`, defined once per connection (any number of owners may share one) and called by
 * its digest (EVALSHA, reloaded by ioredis when Redis lost it), not shipped and hashed on every call.
 */
export function scriptCommand<A extends Array<string | number>, R>(redis: Redis, name: string, lua: string): (numKeys: number, ...args: A) => Promise<R> {
  const commands = redis as unknown as Record<string, ((numKeys: number, ...args: A) => Promise<R>) | undefined>;
  if (!commands[name]) redis.defineCommand(name, { lua });
  return commands[name]!.bind(redis);
}

export type { Redis };
