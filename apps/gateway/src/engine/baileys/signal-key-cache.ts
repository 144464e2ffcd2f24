import type { CacheStore } from '@whiskeysockets/baileys';

/**
 * A cache Baileys can be handed (its CacheStore) with no timer of its own: an entry expires when it is read late or
 * when a later write sweeps it, and the oldest entries go first past the bound. Baileys' default, a NodeCache made
 * on every connect, keeps a timer per cache and is never closed, so each reconnect left one more cache behind.
 */
export class BoundedCache implements CacheStore {
  private readonly items = new Map<string, { value: unknown; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxItems: number,
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
    // re-inserted: the map's order is the age order both the sweep and the bound go by
    this.items.delete(key);
    this.items.set(key, { value, expiresAt: this.clock() + this.ttlMs });
    this.sweep();
    if (this.items.size > this.maxItems) this.items.delete(this.items.keys().next().value!);
  }

  del(key: string): void {
    this.items.delete(key);
  }

  flushAll(): void {
    this.items.clear();
  }

  /** Drops the expired entries: one TTL for all, so they are the oldest, at the front of the map. */
  sweep(): void {
    const now = this.clock();
    for (const [key, item] of this.items) {
      if (item.expiresAt > now) return;
      this.items.delete(key);
    }
  }
}

/**
 * How many keys of each Signal category a session keeps cached. `pre-key` is 0: the pre-keys are written once in a
 * batch at upload (812 at pairing) and each is read once, by the contact's first message, then deleted, so caching
 * them only held every pairing's batch in memory. A category not listed gets DEFAULT_CATEGORY_CAP.
 */
export const SIGNAL_KEY_CAPS: Readonly<Record<string, number>> = {
  'pre-key': 0,
  session: 2000,
  'identity-key': 2000,
  'sender-key': 2000,
  'sender-key-memory': 1000,
  'lid-mapping': 4000,
  'device-list': 2000,
  tctoken: 2000,
  'app-state-sync-key': 200,
  'app-state-sync-version': 50,
};
const DEFAULT_CATEGORY_CAP = 1000;

/**
 * The read cache in front of a session's signal keys (Baileys' makeCacheableSignalKeyStore, whose keys are
 * `<category>.<id>`): one BoundedCache per key category, each with its own cap, so a flood of one kind (device lists
 * of a large group) never evicts another (the sessions being decrypted with).
 */
export class SignalKeyCache implements CacheStore {
  private readonly categories = new Map<string, BoundedCache>();

  constructor(
    private readonly ttlMs = 5 * 60_000,
    private readonly caps: Readonly<Record<string, number>> = SIGNAL_KEY_CAPS,
    private readonly clock: () => number = Date.now,
  ) {}

  get size(): number {
    let total = 0;
    for (const cache of this.categories.values()) total += cache.size;
    return total;
  }

  get<T>(key: string): T | undefined {
    return this.categories.get(categoryOf(key))?.get<T>(key);
  }

  set<T>(key: string, value: T): void {
    const category = categoryOf(key);
    const cap = this.caps[category] ?? DEFAULT_CATEGORY_CAP;
    if (cap === 0) return;
    let cache = this.categories.get(category);
    if (!cache) this.categories.set(category, (cache = new BoundedCache(this.ttlMs, cap, this.clock)));
    cache.set(key, value);
  }

  del(key: string): void {
    this.categories.get(categoryOf(key))?.del(key);
  }

  flushAll(): void {
    this.categories.clear();
  }
}

function categoryOf(key: string): string {
  const dot = key.indexOf('.');
  return dot < 0 ? key : key.slice(0, dot);
}
