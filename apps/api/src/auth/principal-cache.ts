import type { PrincipalChange } from '@app/contracts';
import type { PrincipalChangeListener } from '@app/events';
import type { Principal } from '../common/principal';

export interface PrincipalCacheClock {
  now(): number;
}

export interface PrincipalCacheOptions {
  /** Backstop only: correctness comes from the change bus, not from expiry. 0 turns the cache off. */
  ttlMs: number;
  maxEntries: number;
}

interface Entry {
  principal: Principal;
  loadedAt: number;
}

/**
 * Principals in memory (`key:<token hash>` or `user:<id>` → Principal), exact by construction:
 * - an entry is served only while the change subscription is live, and every gap (`interrupted`, `missed`) drops
 *   them all;
 * - a load is kept only when it started while live and no change nor gap arrived before it finished (`generation`
 *   is bumped by each), so a read that raced an announced change is used once and never cached;
 * - writers commit to PostgreSQL before announcing, and a load reads PostgreSQL after the subscription was live, so
 *   a cached row older than a commit has its announcement still to come on a gapless subscription.
 * The argument in full is in docs/auth.md. TTL and size are backstops.
 */
export class PrincipalCache implements PrincipalChangeListener {
  private live = false;
  private generation = 0;
  private readonly entries = new Map<string, Entry>();
  /** `apiKey:<id>` / `user:<id>` → the lookups that resolved to it (announcements name the id, lookups use a hash). */
  private readonly lookupsOf = new Map<string, Set<string>>();

  constructor(
    private readonly options: PrincipalCacheOptions,
    private readonly clock: PrincipalCacheClock,
  ) {}

  async get(lookup: string, load: () => Promise<Principal | null>): Promise<Principal | null> {
    const hit = this.entries.get(lookup);
    if (hit) {
      if (this.live && this.clock.now() - hit.loadedAt < this.options.ttlMs) return hit.principal;
      this.remove(lookup);
    }
    const startedLive = this.live;
    const generation = this.generation;
    const principal = await load();
    if (principal && startedLive && generation === this.generation && this.options.ttlMs > 0) this.store(lookup, principal);
    return principal;
  }

  /**
   * The principal `get` would serve at once, without loading (null when it would have to load): what lets the rate
   * limiter know, before the guard runs, that the guard will accept a credential without I/O.
   */
  peek(lookup: string): Principal | null {
    const hit = this.entries.get(lookup);
    return hit && this.live && this.clock.now() - hit.loadedAt < this.options.ttlMs ? hit.principal : null;
  }

  get size(): number {
    return this.entries.size;
  }

  changed(change: PrincipalChange): void {
    this.generation++;
    const owner = `${change.kind}:${change.id}`;
    for (const lookup of this.lookupsOf.get(owner) ?? []) this.entries.delete(lookup);
    this.lookupsOf.delete(owner);
  }

  interrupted(): void {
    this.live = false;
    this.dropAll();
  }

  /** Also the first call, once subscribed: from then on every change reaches this cache. */
  missed(): void {
    this.dropAll();
    this.live = true;
  }

  private dropAll(): void {
    this.generation++;
    this.entries.clear();
    this.lookupsOf.clear();
  }

  private store(lookup: string, principal: Principal): void {
    this.remove(lookup);
    while (this.entries.size >= this.options.maxEntries && this.entries.size > 0) {
      this.remove(this.entries.keys().next().value as string);
    }
    if (this.options.maxEntries <= 0) return;
    this.entries.set(lookup, { principal, loadedAt: this.clock.now() });
    const owner = `${principal.kind}:${principal.id}`;
    let lookups = this.lookupsOf.get(owner);
    if (!lookups) this.lookupsOf.set(owner, (lookups = new Set()));
    lookups.add(lookup);
  }

  private remove(lookup: string): void {
    const entry = this.entries.get(lookup);
    if (!entry) return;
    this.entries.delete(lookup);
    const owner = `${entry.principal.kind}:${entry.principal.id}`;
    const lookups = this.lookupsOf.get(owner);
    lookups?.delete(lookup);
    if (lookups?.size === 0) this.lookupsOf.delete(owner);
  }
}
