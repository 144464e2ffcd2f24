import { TickBatch } from './tick-batch';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('TickBatch', () => {
  it('runs the calls of one turn as one, each caller getting its own answer', async () => {
    const runs: string[][] = [];
    const batch = new TickBatch<string, string>(async (ids) => (runs.push(ids), ids.map((id) => id.toUpperCase())), (id) => id);
    const answers = await Promise.all(['a', 'b', 'c'].map((id) => batch.call(id)));
    expect(answers).toEqual(['A', 'B', 'C']);
    expect(runs).toEqual([['a', 'b', 'c']]);
    // a later turn is a statement of its own
    expect(await batch.call('d')).toBe('D');
    expect(runs).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('never puts one key twice in a statement: the second call runs after the first statement has finished', async () => {
    const order: string[] = [];
    const releases: Array<() => void> = [];
    const batch = new TickBatch<{ key: string; n: number }, number>(
      (inputs) =>
        new Promise((resolve) => {
          order.push(`start ${inputs.map((i) => `${i.key}${i.n}`).join(' ')}`);
          releases.push(() => (order.push(`end ${inputs.map((i) => `${i.key}${i.n}`).join(' ')}`), resolve(inputs.map((i) => i.n))));
        }),
      (input) => input.key,
    );
    const calls = [batch.call({ key: 'a', n: 1 }), batch.call({ key: 'b', n: 1 }), batch.call({ key: 'a', n: 2 })];
    await turn();
    expect(order).toEqual(['start a1 b1']);
    await turn();
    // the second write of `a` waits for the first one's statement
    expect(order).toEqual(['start a1 b1']);
    releases[0]();
    await turn();
    await turn();
    expect(order).toEqual(['start a1 b1', 'end a1 b1', 'start a2']);
    releases[1]();
    expect(await Promise.all(calls)).toEqual([1, 1, 2]);
  });

  it('splits a turn above the bound into several statements, and fails every caller of a failed statement', async () => {
    const runs: number[] = [];
    const batch = new TickBatch<number, number>(
      async (inputs) => {
        runs.push(inputs.length);
        if (inputs.includes(4)) throw new Error('database gone');
        return inputs;
      },
      String,
      3,
    );
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => batch.call(n)));
    expect(runs).toEqual([3, 2]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
  });
});

describe('TickBatch under a burst', () => {
  it('with every statement slot busy, the calls made meanwhile go together in the next, however many turns they span', async () => {
    const runs: string[][] = [];
    const releases: Array<() => void> = [];
    const batch = new TickBatch<string, string>(
      (ids) => new Promise((resolve) => (runs.push(ids), releases.push(() => resolve(ids)))),
      (id) => id,
      500,
      1,
    );
    const first = batch.call('a');
    await turn();
    expect(runs).toEqual([['a']]);
    // three more callers, each in a turn of its own, while the first statement runs
    const later: Array<Promise<string>> = [];
    for (const id of ['b', 'c', 'd']) {
      later.push(batch.call(id));
      await turn();
    }
    expect(runs).toEqual([['a']]);
    releases[0]();
    expect(await first).toBe('a');
    await turn();
    await turn();
    expect(runs).toEqual([['a'], ['b', 'c', 'd']]);
    releases[1]();
    expect(await Promise.all(later)).toEqual(['b', 'c', 'd']);
    // idle again: a lone call goes at the end of its turn
    const lone = batch.call('e');
    await turn();
    expect(runs).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    releases[2]();
    expect(await lone).toBe('e');
  });
});

describe('TickBatch with free statement slots', () => {
  it('runs a second statement beside the first, but never a key that a statement under way holds', async () => {
    const runs: string[][] = [];
    const releases: Array<() => void> = [];
    const batch = new TickBatch<{ key: string; n: number }, number>(
      (inputs) => new Promise((resolve) => (runs.push(inputs.map((i) => `${i.key}${i.n}`)), releases.push(() => resolve(inputs.map((i) => i.n))))),
      (input) => input.key,
      500,
      2,
    );
    const a1 = batch.call({ key: 'a', n: 1 });
    await turn();
    const b1 = batch.call({ key: 'b', n: 1 });
    const a2 = batch.call({ key: 'a', n: 2 });
    await turn();
    await turn();
    // b1 went beside a1; a2 waits for a1's statement
    expect(runs).toEqual([['a1'], ['b1']]);
    releases[0]();
    expect(await a1).toBe(1);
    await turn();
    await turn();
    expect(runs).toEqual([['a1'], ['b1'], ['a2']]);
    releases[1]();
    releases[2]();
    expect(await Promise.all([b1, a2])).toEqual([1, 2]);
  });
});
