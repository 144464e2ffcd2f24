import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';

export interface ChangeListener<T> {
  /** Something changed (already committed where it is stored): read it again. */
  changed(change: T): void;
  /** The subscription is down: announcements from now on are lost until `missed`. */
  interrupted?(): void;
  /** Subscribed again after an interruption (or an announcement could not be read): whatever was announced meanwhile is gone. */
  missed(): void;
}

export interface ChangeCodec<T> {
  encode(change: T): string;
  /** null for a message that cannot be read: the listener hears `missed` instead */
  decode(message: string): T | null;
}

/**
 * A "this changed, read it again" notice from the processes that write something to those that cache it: Redis
 * pub/sub on one channel. Pub/sub delivers nothing while a subscriber is disconnected, so a listener is told when
 * its subscription is down (`interrupted`) and when it is live again (`missed`): a cache can drop what it could not
 * hear about. The writer announces only after its change is committed.
 */
export class ChangeChannel<T> {
  private readonly channel: string;

  /** `redis` is a shared connection for announcing, or a connection of its own for subscribing (a subscribed connection can do nothing else). */
  constructor(
    private readonly redis: Redis,
    keys: RedisKeys,
    channelName: string,
    private readonly codec: ChangeCodec<T>,
  ) {
    this.channel = keys.key(channelName);
  }

  async announce(change: T): Promise<void> {
    await this.redis.publish(this.channel, this.codec.encode(change));
  }

  /** Resolves once subscribed: every announcement made after that reaches `listener`, or `interrupted` is called. */
  async subscribe(listener: ChangeListener<T>): Promise<void> {
    this.redis.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const change = this.codec.decode(message);
      // an unreadable announcement is a change we cannot place: treat it as a gap
      if (change !== null) listener.changed(change);
      else listener.missed();
    });
    await this.redis.subscribe(this.channel);
    let down = false;
    this.redis.on('close', () => {
      if (down) return;
      down = true;
      listener.interrupted?.();
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
}
