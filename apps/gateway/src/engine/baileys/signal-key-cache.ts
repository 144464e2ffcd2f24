import type { CacheStore } from '@whiskeysockets/baileys';

/**
 * The read cache in front of a session's signal keys (Baileys' makeCacheableSignalKeyStore), one per session for as
 * long as the session stays on this gateway: Baileys' default, a NodeCache made on every connect, keeps a timer of its
 * own and was never closed, so each reconnect left one more cache full of keys behind. This one has no timer (an
 * entry expires when it is read late) and a size bound (the oldest entries go first).
 */
export class SignalKeyCache implements CacheStore {
  private readonly items = new Map<string, { value: unknown; expiresAt: number }>();

  constructor(
    private readonly ttlMs = 5 * 60_000,
    private readonly maxItems = 20_000,
    private readonly clock: () => number = Date.now,
  ) {}

  get size(): number {
    return this.items.size;
  }

  get<T>(key: string): T | undefined {
    const item = this.items.get(key);
    if (!item) return undefined;
    if (item.expiresAt <= this.clock()) {
      this.items.delete(key);
      return undefined;
    }
    return item.value as T;
  }

  set<T>(key: string, value: T): void {
    // re-inserted: the map's order is the age order the bound evicts by
    this.items.delete(key);
    this.items.set(key, { value, expiresAt: this.clock() + this.ttlMs });
    if (this.items.size > this.maxItems) this.items.delete(this.items.keys().next().value!);
  }

  del(key: string): void {
    this.items.delete(key);
  }

  flushAll(): void {
    this.items.clear();
  }
}
