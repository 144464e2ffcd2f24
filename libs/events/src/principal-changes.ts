import type { Redis } from 'ioredis';
import { PRINCIPAL_CHANGED_CHANNEL, PrincipalChange } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

export interface PrincipalChangeListener {
  /** A key or user changed in PostgreSQL (already committed): read it again. */
  changed(change: PrincipalChange): void;
  /** The subscription is down: announcements from now on are lost until `missed`. */
  interrupted(): void;
  /** Subscribed again after an interruption; whatever was announced meanwhile is gone. */
  missed(): void;
}

/**
 * "A principal changed" between whoever writes keys and users (the admin CLI, the API) and every API replica
 * (which caches principals and holds WebSockets). Redis pub/sub on one channel, `kind:id` as the message.
 * The writer announces only after its transaction committed; a listener trusts what it cached only while its
 * subscription has had no gap (see docs/auth.md).
 */
export class PrincipalChanges {
  private readonly channel: string;

  /** `redis` is a shared connection for announcing, or a connection of its own for subscribing (a subscribed connection can do nothing else). */
  constructor(
    private readonly redis: Redis,
    keys: RedisKeys,
  ) {
    this.channel = keys.key(PRINCIPAL_CHANGED_CHANNEL);
  }

  async announce(change: PrincipalChange): Promise<void> {
    await this.redis.publish(this.channel, `${change.kind}:${change.id}`);
  }

  /** Resolves once subscribed: every announcement made after that reaches `listener`, or `interrupted` is called. */
  async subscribe(listener: PrincipalChangeListener): Promise<void> {
    this.redis.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const change = PrincipalChanges.parse(message);
      // an unreadable announcement is a change we cannot place: treat it as a gap
      if (change) listener.changed(change);
      else listener.missed();
    });
    await this.redis.subscribe(this.channel);
    let down = false;
    this.redis.on('close', () => {
      if (down) return;
      down = true;
      listener.interrupted();
    });
    // 'ready' is emitted before ioredis re-subscribes; our own SUBSCRIBE's reply proves the channel is live again
    this.redis.on('ready', () => {
      this.redis.subscribe(this.channel).then(
        () => {
          down = false;
          listener.missed();
        },
        () => undefined, // the connection dropped again: 'close' follows, then another 'ready'
      );
    });
  }

  static parse(message: string): PrincipalChange | null {
    const at = message.indexOf(':');
    const kind = message.slice(0, at);
    const id = message.slice(at + 1);
    return at > 0 && id && (kind === 'apiKey' || kind === 'user') ? { kind, id } : null;
  }
}
