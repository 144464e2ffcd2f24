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

export type { Redis };
