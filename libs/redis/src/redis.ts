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

export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new IORedis(url, {
    // BullMQ workers need this; harmless for the rest
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    lazyConnect: false,
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
