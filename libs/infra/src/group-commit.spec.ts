import { GroupCommit } from './group-commit';

/** A flush the test finishes by hand: each call is kept with its items, answered or failed when the test says. */
function heldFlushes() {
  const calls: Array<{ items: string[]; answer(): void; fail(err: Error): void }> = [];
  const flush = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ items, answer: () => resolve(items.map((g) => `row:${g}`)), fail: reject });
    });
  return { calls, flush, groups: () => calls.map((c) => c.items) };
}

/** The end of the current turn (what a linger of 0 waits for), and the promise callbacks queued before it. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit without a linger (the API: a lane per session, one statement in flight)', () => {
  const accepts = (flush: (items: string[]) => Promise<string[]>, more = {}) => new GroupCommit(flush, { linger: 'none', maxInFlight: 1, ...more });

  it('flushes a lone item at once, in the same turn, alone', async () => {
    const { calls, flush, groups } = heldFlushes();
    const group = accepts(flush);
    const a = group.submit('a', 's1');
    expect(groups()).toEqual([['a']]);
    calls[0].answer();
    await expect(a).resolves.toBe('row:a');
    expect(group.waitingFor('s1')).toBe(0);
    const b = group.submit('b', 's1');
    expect(groups()).toEqual([['a'], ['b']]);
    calls[1].answer();
    await expect(b).resolves.toBe('row:b');
  });

  it('groups the items that arrive during a flush into the next one, in arrival order, each with its own result', async () => {
    const { calls, flush, groups } = heldFlushes();
    const group = accepts(flush);
    const first = group.submit('a', 's1');
    const later = ['b', 'c', 'd'].map((x) => group.submit(x, 's1'));
    expect(calls).toHaveLength(1);
    expect(group.waitingFor('s1')).toBe(3);
    calls[0].answer();
    await expect(first).resolves.toBe('row:a');
    expect(groups()).toEqual([['a'], ['b', 'c', 'd']]);
    const e = group.submit('e', 's1');
    expect(calls).toHaveLength(2);
    calls[1].answer();
    expect(await Promise.all(later)).toEqual(['row:b', 'row:c', 'row:d']);
    expect(groups()).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    calls[2].answer();
    await expect(e).resolves.toBe('row:e');
  });

  it('keeps lanes apart: another lane flushes at once while one is in flight', () => {
    const { flush, groups } = heldFlushes();
    const group = accepts(flush);
    void group.submit('a', 's1');
    void group.submit('b', 's1');
    void group.submit('x', 's2');
    expect(groups()).toEqual([['a'], ['x']]);
    expect([group.waitingFor('s1'), group.waitingFor('s2')]).toEqual([1, 0]);
  });

  it('cuts a group at maxSize; the rest follow in the next flushes, in order', async () => {
    const { calls, flush, groups } = heldFlushes();
    const group = accepts(flush, { maxSize: 2 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((x) => group.submit(x, 's1'));
    for (let i = 0; i < 3; i++) {
      calls[i].answer();
      await turn();
    }
    expect(groups()).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
    expect(await Promise.all(all)).toEqual(['row:a', 'row:b', 'row:c', 'row:d', 'row:e']);
  });

  it('bounds a group by weight: one heavier than the bound goes alone, the others while the sum fits', async () => {
    const { calls, flush, groups } = heldFlushes();
    const group = accepts(flush, { maxWeight: 10, weightOf: (item: string) => Number(item.split(':')[1]) });
    const all = ['a:0', 'b:4', 'c:6', 'd:1', 'e:30', 'f:2'].map((x) => group.submit(x, 's1'));
    for (let i = 0; i < 5; i++) {
      calls[i].answer();
      await turn();
    }
    expect(groups()).toEqual([['a:0'], ['b:4', 'c:6'], ['d:1'], ['e:30'], ['f:2']]);
    expect(await Promise.all(all)).toHaveLength(6);
  });

  it('a failed flush fails its own items only: those waiting behind it are flushed next', async () => {
    const { calls, flush, groups } = heldFlushes();
    const group = accepts(flush);
    // settled as values, so a rejection reached before its turn is a failure of the test, not of the process
    const outcome = (item: string) => group.submit(item, 's1').then((row) => row, (err: Error) => `failed: ${err.message}`);
    const a = outcome('a');
    const b = outcome('b');
    const c = outcome('c');
    calls[0].fail(new Error('connection reset'));
    expect(await a).toBe('failed: connection reset');
    expect(groups()).toEqual([['a'], ['b', 'c']]);
    const d = outcome('d');
    calls[1].fail(new Error('deadlock'));
    expect([await b, await c]).toEqual(['failed: deadlock', 'failed: deadlock']);
    calls[2].answer();
    expect(await d).toBe('row:d');
    expect(group.waitingFor('s1')).toBe(0);
  });

  it('fails a flush that answers another number of results, and one that throws before its promise', async () => {
    const short = accepts(async () => ['only one']);
    const one = short.submit('a', 's1');
    const two = short.submit('b', 's1');
    const three = short.submit('c', 's1');
    await expect(one).resolves.toBe('only one');
    await expect(two).rejects.toThrow('a group of 2 got 1 results');
    await expect(three).rejects.toThrow('a group of 2 got 1 results');
    const thrown = accepts(() => {
      throw new Error('bad parameters');
    });
    await expect(thrown.submit('a', 's1')).rejects.toThrow('bad parameters');
    expect(thrown.waitingFor('s1')).toBe(0);
  });
});

describe('GroupCommit with a linger of one turn (the gateway: a key per row)', () => {
  it('flushes the items of one turn as one, each caller getting its own answer', async () => {
    const runs: string[][] = [];
    const batch = new GroupCommit<string, string>(async (ids) => (runs.push(ids), ids.map((id) => id.toUpperCase())), { keyOf: (id) => id });
    const answers = await Promise.all(['a', 'b', 'c'].map((id) => batch.submit(id)));
    expect(answers).toEqual(['A', 'B', 'C']);
    expect(runs).toEqual([['a', 'b', 'c']]);
    expect(await batch.submit('d')).toBe('D');
    expect(runs).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('never puts one key twice in a flush: the second waits until the first flush has finished', async () => {
    const { calls, flush, groups } = heldFlushes();
    const batch = new GroupCommit(flush, { keyOf: (item: string) => item[0], maxInFlight: 4 });
    const all = [batch.submit('a1'), batch.submit('b1'), batch.submit('a2')];
    await turn();
    await turn();
    expect(groups()).toEqual([['a1', 'b1']]);
    calls[0].answer();
    await turn();
    await turn();
    expect(groups()).toEqual([['a1', 'b1'], ['a2']]);
    calls[1].answer();
    expect(await Promise.all(all)).toEqual(['row:a1', 'row:b1', 'row:a2']);
  });

  it('runs a second flush beside the first when a slot is free, but never with a key the first holds', async () => {
    const { calls, flush, groups } = heldFlushes();
    const batch = new GroupCommit(flush, { keyOf: (item: string) => item[0], maxInFlight: 2 });
    const a1 = batch.submit('a1');
    await turn();
    const b1 = batch.submit('b1');
    const a2 = batch.submit('a2');
    await turn();
    await turn();
    expect(groups()).toEqual([['a1'], ['b1']]);
    calls[0].answer();
    expect(await a1).toBe('row:a1');
    await turn();
    await turn();
    expect(groups()).toEqual([['a1'], ['b1'], ['a2']]);
    calls[1].answer();
    calls[2].answer();
    expect(await Promise.all([b1, a2])).toEqual(['row:b1', 'row:a2']);
  });

  it('with the in-flight limit reached, the items of later turns go together in the next flush', async () => {
    const { calls, flush, groups } = heldFlushes();
    const batch = new GroupCommit(flush, { maxInFlight: 1 });
    const first = batch.submit('a');
    await turn();
    expect(groups()).toEqual([['a']]);
    const later: Array<Promise<string>> = [];
    for (const id of ['b', 'c', 'd']) {
      later.push(batch.submit(id));
      await turn();
    }
    expect(groups()).toEqual([['a']]);
    calls[0].answer();
    expect(await first).toBe('row:a');
    await turn();
    expect(groups()).toEqual([['a'], ['b', 'c', 'd']]);
    calls[1].answer();
    expect(await Promise.all(later)).toEqual(['row:b', 'row:c', 'row:d']);
  });

  it('splits a turn above maxSize, and a failed flush fails only its own callers', async () => {
    const runs: number[][] = [];
    const batch = new GroupCommit<number, number>(
      async (inputs) => {
        runs.push(inputs);
        if (inputs.includes(4)) throw new Error('database gone');
        return inputs;
      },
      { maxSize: 3, maxInFlight: 4 },
    );
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => batch.submit(n)));
    expect(runs).toEqual([[1, 2, 3], [4, 5]]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
  });
});

describe('GroupCommit with a linger in ms (the dispatcher: a statement fills)', () => {
  afterEach(() => jest.useRealTimers());

  it('lets a flush fill for the linger, flushes a full one at once, and cuts the linger short on flushSoon', async () => {
    jest.useFakeTimers();
    const batches: number[][] = [];
    const b = new GroupCommit(async (items: number[]) => (batches.push(items), items.map((i) => i * 2)), { maxSize: 3, maxInFlight: 1, linger: 50 });
    const first = [b.submit(1), b.submit(2)];
    await jest.advanceTimersByTimeAsync(10);
    expect(batches).toEqual([]);
    await jest.advanceTimersByTimeAsync(50);
    expect(batches).toEqual([[1, 2]]);
    expect(await Promise.all(first)).toEqual([2, 4]);
    const full = [b.submit(3), b.submit(4), b.submit(5)];
    await jest.advanceTimersByTimeAsync(1);
    expect(batches[1]).toEqual([3, 4, 5]);
    await Promise.all(full);
    const soon = b.submit(6);
    b.flushSoon();
    await jest.advanceTimersByTimeAsync(1);
    expect(batches[2]).toEqual([6]);
    expect(await soon).toBe(12);
  });

  it('asked to flush soon while its flush is under way, starts the next flush as soon as that one ends, without lingering', async () => {
    jest.useFakeTimers();
    const batches: number[][] = [];
    let finish!: () => void;
    const b = new GroupCommit(
      async (items: number[]) => {
        batches.push(items);
        if (batches.length === 1) await new Promise<void>((r) => (finish = r));
        return items;
      },
      { maxSize: 10, maxInFlight: 1, linger: 50 },
    );
    const first = b.submit(1);
    b.flushSoon();
    await jest.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([[1]]);
    // queued behind the flush under way: flushSoon now cannot cut a linger, it marks the next flush
    const second = b.submit(2);
    b.flushSoon();
    finish();
    await first;
    await jest.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([[1], [2]]);
    expect(await second).toBe(2);
    // the mark is spent: the flush after lingers again
    void b.submit(3);
    await jest.advanceTimersByTimeAsync(10);
    expect(batches).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(50);
    expect(batches).toEqual([[1], [2], [3]]);
  });
});
