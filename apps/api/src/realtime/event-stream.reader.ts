import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import type { EventEnvelope } from '@app/contracts';
import { EventStream } from '@app/events';
import { createRedis, Redis, RedisKeys } from '@app/redis';

/** `text` is the envelope as published (JSON), passed on so that it is not serialized again per event. */
type Listener = (envelope: EventEnvelope, text: string) => void;

/**
 * Tails the event stream for this API replica (XREAD from "now", no consumer group: every replica sees every event),
 * so a WebSocket client gets its organization's events whichever replica it is connected to.
 * Runs only while at least one listener is attached.
 */
@Injectable()
export class EventStreamReader implements OnApplicationShutdown {
  private readonly logger = new Logger(EventStreamReader.name);
  private readonly listeners = new Set<Listener>();
  private redis: Redis | null = null;
  private running = false;
  private lastId = '$';

  constructor(
    private readonly config: ApiConfig,
    private readonly keys: RedisKeys,
  ) {}

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (!this.running) void this.loop();
    return () => this.listeners.delete(listener);
  }

  private async loop(): Promise<void> {
    this.running = true;
    // a blocking read needs a connection of its own
    if (!this.redis) {
      this.redis = createRedis(this.config.REDIS_URL);
      // a Redis restart fails the read below (logged there) and ioredis reconnects: the error event itself is no news
      this.redis.on('error', () => undefined);
    }
    const stream = new EventStream(this.redis, this.keys);
    while (this.running && this.listeners.size > 0) {
      try {
        for (const [id, fields] of await stream.readAfter(this.lastId, 500, 1000)) {
          this.lastId = id;
          const raw = EventStream.envelopeOf(fields);
          if (!raw) continue;
          const envelope = JSON.parse(raw) as EventEnvelope;
          for (const l of this.listeners) l(envelope, raw);
        }
      } catch (err) {
        if (!this.running) break;
        this.logger.warn(`event stream read failed: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    this.running = false;
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.listeners.clear();
    this.redis?.disconnect();
  }
}
