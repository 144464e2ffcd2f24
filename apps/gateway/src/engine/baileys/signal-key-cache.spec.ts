import { BoundedCache, SignalKeyCache } from './signal-key-cache';

describe('BoundedCache', () => {
  it('expires an entry read late, sweeps expired entries on a write, and evicts the oldest past its bound', () => {
    let now = 0;
    const cache = new BoundedCache(1000, 3, () => now);
    cache.set('a', 1);
    now = 500;
    cache.set('b', 2);
    now = 1000;
    expect(cache.get('a')).toBeUndefined();
    now = 1600;
    // 'b' expired at 1500: the write of 'c' sweeps it without anyone reading it
    cache.set('c', 3);
    expect(cache.size).toBe(1);
    cache.set('d', 4);
    cache.set('e', 5);
    cache.set('f', 6);
    expect(cache.size).toBe(3);
    expect([cache.get('c'), cache.get('d'), cache.get('f')]).toEqual([undefined, 4, 6]);
  });
});

describe('SignalKeyCache', () => {
  it('keeps no pre-key: the 812 written at upload are each read once, from the store', () => {
    const cache = new SignalKeyCache();
    for (let id = 1; id <= 812; id++) cache.set(`pre-key.${id}`, { public: 'p', private: 'q' });
    expect(cache.size).toBe(0);
    expect(cache.get('pre-key.1')).toBeUndefined();
  });

  it('caps each key category on its own: a flood of device lists never evicts the sessions', () => {
    const cache = new SignalKeyCache(60_000, { session: 2, 'device-list': 3 });
    cache.set('session.alice.0', 'A');
    cache.set('session.bob.0', 'B');
    for (let i = 0; i < 100; i++) cache.set(`device-list.${i}`, ['0']);
    expect(cache.get('session.alice.0')).toBe('A');
    expect(cache.get('session.bob.0')).toBe('B');
    expect(cache.size).toBe(5);
    cache.set('session.carol.0', 'C');
    expect(cache.get('session.alice.0')).toBeUndefined();
    // a category with no cap of its own gets the default one, not none
    cache.set('tctoken.x', { token: 't' });
    expect(cache.get('tctoken.x')).toEqual({ token: 't' });
  });

  it('sweeps each category on its writes and forgets everything on flushAll', () => {
    let now = 0;
    const cache = new SignalKeyCache(1000, { session: 10 }, () => now);
    cache.set('session.a', 'A');
    now = 2000;
    cache.set('session.b', 'B');
    expect(cache.size).toBe(1);
    cache.flushAll();
    expect(cache.get('session.b')).toBeUndefined();
  });
});
