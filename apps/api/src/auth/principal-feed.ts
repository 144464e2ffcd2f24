import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import type { PrincipalChange } from '@app/contracts';
import { PrincipalChangeListener, PrincipalChanges } from '@app/events';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { PrincipalCache } from './principal-cache';

/** The subscriber connection's client name, so an operator (or a test) can find it in `CLIENT LIST`. */
export const principalFeedConnectionName = (keys: RedisKeys) => `${keys.prefix}:api-principal-changes`.replace(/\s/g, '_');

/**
 * This replica's subscription to `PrincipalChanges`: feeds the principal cache first, then every other listener
 * (the WebSocket server closes or narrows the sockets of a changed principal).
 */
@Injectable()
export class PrincipalFeed implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PrincipalFeed.name);
  private readonly listeners = new Set<PrincipalChangeListener>();
  private redis: Redis | null = null;

  constructor(
    private readonly config: ApiConfig,
    private readonly keys: RedisKeys,
    private readonly cache: PrincipalCache,
  ) {}

  async onModuleInit(): Promise<void> {
    // a subscribed connection can do nothing else
    this.redis = createRedis(this.config.REDIS_URL, { connectionName: principalFeedConnectionName(this.keys) });
    this.redis.on('error', (err) => this.logger.warn(`principal changes subscription: ${err.message}`));
    const fanout: PrincipalChangeListener = {
      changed: (change: PrincipalChange) => {
        this.cache.changed(change);
        for (const l of this.listeners) l.changed(change);
      },
      interrupted: () => {
        this.cache.interrupted();
        for (const l of this.listeners) l.interrupted();
      },
      missed: () => {
        this.cache.missed();
        for (const l of this.listeners) l.missed();
      },
    };
    await new PrincipalChanges(this.redis, this.keys).subscribe(fanout);
    // subscribed: from here on every change is heard, so the cache may start keeping what it loads
    this.cache.missed();
  }

  listen(listener: PrincipalChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async onApplicationShutdown(): Promise<void> {
    this.listeners.clear();
    this.redis?.disconnect();
  }
}
