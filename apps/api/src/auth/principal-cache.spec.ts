import type { Permission } from '@app/contracts';
import type { Principal } from '../common/principal';
import { PrincipalCache } from './principal-cache';

/** What a key without limits carries beside its permissions. */
const KEY_DEFAULTS = { name: 'key', sessionIds: null, allowedIps: null, expiresAt: null, tokenVersion: 0 };

class FakeClock {
  ms = 1_000_000;
  now(): number {
    return this.ms;
  }
}

/** A PostgreSQL stand-in: the rows as committed now, and how many times they were read. */
class FakeKeys {
  reads = 0;
  permissions = new Map<string, Permission[] | null>([['key_1', ['sessions:read']]]);
  load(id: string) {
    return async (): Promise<Principal | null> => {
      this.reads++;
      const permissions = this.permissions.get(id);
      return permissions ? { kind: 'apiKey', id, organizationId: 'org_1', role: null, permissions: new Set(permissions), ...KEY_DEFAULTS } : null;
    };
  }
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('PrincipalCache', () => {
  let clock: FakeClock;
  let db: FakeKeys;
  let cache: PrincipalCache;

  beforeEach(() => {
    clock = new FakeClock();
    db = new FakeKeys();
    cache = new PrincipalCache({ ttlMs: 60_000, maxEntries: 100 }, clock);
    cache.missed(); // subscribed
  });

  it('serves a second request from memory, then the key as changed once its change is announced', async () => {
    await cache.get('key:h1', db.load('key_1'));
    await cache.get('key:h1', db.load('key_1'));
    expect(db.reads).toBe(1);

    db.permissions.set('key_1', ['sessions:read', 'sessions:write']);
    cache.changed({ kind: 'apiKey', id: 'key_1' });
    const after = await cache.get('key:h1', db.load('key_1'));
    expect([...after!.permissions]).toEqual(['sessions:read', 'sessions:write']);
    expect(db.reads).toBe(2);
  });

  it('peek serves what get would serve from memory, and never loads', async () => {
    expect(cache.peek('key:h1')).toBeNull();
    expect(db.reads).toBe(0);
    await cache.get('key:h1', db.load('key_1'));
    expect(cache.peek('key:h1')?.id).toBe('key_1');
    // an announced change, a gap or the TTL: what get would load again, peek does not know
    cache.changed({ kind: 'apiKey', id: 'key_1' });
    expect(cache.peek('key:h1')).toBeNull();
    await cache.get('key:h1', db.load('key_1'));
    cache.interrupted();
    expect(cache.peek('key:h1')).toBeNull();
    cache.missed();
    await cache.get('key:h1', db.load('key_1'));
    clock.ms += 60_000;
    expect(cache.peek('key:h1')).toBeNull();
    expect(db.reads).toBe(3);
  });

  it('keeps nothing before the subscription is live, and drops everything at a gap', async () => {
    const cold = new PrincipalCache({ ttlMs: 60_000, maxEntries: 100 }, clock);
    await cold.get('key:h1', db.load('key_1'));
    await cold.get('key:h1', db.load('key_1'));
    expect(db.reads).toBe(2);

    await cache.get('key:h1', db.load('key_1'));
    cache.interrupted();
    db.permissions.set('key_1', null); // revoked while the subscription was down: its announcement is lost
    expect(await cache.get('key:h1', db.load('key_1'))).toBeNull();
    cache.missed();
    expect(await cache.get('key:h1', db.load('key_1'))).toBeNull();
    expect(cache.size).toBe(0);
  });

  it('does not serve while interrupted, even what it loaded just before', async () => {
    await cache.get('key:h1', db.load('key_1'));
    cache.interrupted();
    await cache.get('key:h1', db.load('key_1'));
    await cache.get('key:h1', db.load('key_1'));
    expect(db.reads).toBe(3);
  });

  it('uses but never keeps a load that raced an announced change', async () => {
    const slow = deferred<Principal | null>();
    const pending = cache.get('key:h1', () => slow.promise);
    // the read saw the old row, then the change committed and was announced before the read returned
    cache.changed({ kind: 'apiKey', id: 'key_1' });
    slow.resolve({ kind: 'apiKey', id: 'key_1', organizationId: 'org_1', role: null, permissions: new Set(['sessions:write']), ...KEY_DEFAULTS });
    expect((await pending)!.permissions.has('sessions:write')).toBe(true);

    db.permissions.set('key_1', ['sessions:read']);
    const next = await cache.get('key:h1', db.load('key_1'));
    expect([...next!.permissions]).toEqual(['sessions:read']);
    expect(db.reads).toBe(1);
  });

  it('never keeps a load that spanned a gap', async () => {
    const slow = deferred<Principal | null>();
    const pending = cache.get('key:h1', () => slow.promise);
    cache.interrupted();
    cache.missed();
    slow.resolve({ kind: 'apiKey', id: 'key_1', organizationId: 'org_1', role: null, permissions: new Set(['sessions:write']), ...KEY_DEFAULTS });
    await pending;
    expect(cache.size).toBe(0);
  });

  it('drops every lookup of a changed principal and no other', async () => {
    db.permissions.set('key_2', ['sessions:read']);
    await cache.get('key:h1', db.load('key_1'));
    await cache.get('key:h2', db.load('key_2'));
    cache.changed({ kind: 'apiKey', id: 'key_1' });
    await cache.get('key:h1', db.load('key_1'));
    await cache.get('key:h2', db.load('key_2'));
    expect(db.reads).toBe(3);
  });

  it('re-reads an entry older than the TTL and holds no more than maxEntries', async () => {
    const small = new PrincipalCache({ ttlMs: 1000, maxEntries: 2 }, clock);
    small.missed();
    for (const id of ['key_1', 'key_2', 'key_3']) {
      db.permissions.set(id, ['sessions:read']);
      await small.get(`key:${id}`, db.load(id));
    }
    expect(small.size).toBe(2);
    await small.get('key:key_1', db.load('key_1')); // the oldest was dropped
    expect(db.reads).toBe(4);

    clock.ms += 1000;
    await small.get('key:key_1', db.load('key_1'));
    expect(db.reads).toBe(5);
  });

  it('caches no refusal: a key that does not exist is looked up each time', async () => {
    await cache.get('key:nope', db.load('key_9'));
    await cache.get('key:nope', db.load('key_9'));
    expect(db.reads).toBe(2);
  });
});
