import type { Redis } from 'ioredis';

/**
 * The one pub/sub subscriber of a gateway process. A connection in subscriber mode can run nothing else, so every
 * signal a gateway listens to (its send signal, its adopt signal) shares this one: one `message` listener dispatches
 * each message by channel to whoever subscribed to it. Each signal still owns its channel's name and what its message
 * means (SendSignal, AdoptSignal); this class only owns the connection's subscriptions.
 */
export class GatewaySignals {
  private readonly handlers = new Map<string, Set<(message: string) => void>>();

  /** `subscriber` must be a connection of its own (it enters subscriber mode); its owner closes it. */
  constructor(readonly subscriber: Redis) {
    subscriber.on('message', (channel: string, message: string) => {
      for (const handler of this.handlers.get(channel) ?? []) handler(message);
    });
  }

  /** Hears every message on `channel` from the moment this resolves; the returned function stops hearing them. */
  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    let handlers = this.handlers.get(channel);
    if (!handlers) this.handlers.set(channel, (handlers = new Set()));
    handlers.add(onMessage);
    // not before the connection is ready: a SUBSCRIBE queued while it connects puts it in subscriber mode before
    // ioredis' ready check (INFO), which then fails and resets the connection, and the subscription is late or lost
    // (seen in a clean-clone CI: "Connection in subscriber mode, only subscriber commands may be used")
    if (this.subscriber.status !== 'ready') await new Promise<void>((resolve) => this.subscriber.once('ready', () => resolve()));
    await this.subscriber.subscribe(channel);
    return async () => {
      const current = this.handlers.get(channel);
      current?.delete(onMessage);
      if (current?.size !== 0) return;
      this.handlers.delete(channel);
      await this.subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }
}
