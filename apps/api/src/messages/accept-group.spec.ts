import { AcceptGroup } from './accept-group';

/** A write the test finishes by hand: each call is kept with its group, answered or failed when the test says. */
function heldWrites() {
  const calls: Array<{ group: string[]; answer(): void; fail(err: Error): void }> = [];
  const write = (group: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ group, answer: () => resolve(group.map((g) => `row:${g}`)), fail: reject });
    });
  return { calls, write };
}

/** Lets the promise callbacks queued so far run (a statement's return reaching the next group). */
const settle = () => new Promise((r) => setImmediate(r));

describe('AcceptGroup', () => {
  it('writes a lone accept at once, in the same turn, alone', async () => {
    const { calls, write } = heldWrites();
    const group = new AcceptGroup(write);
    const a = group.submit('s1', 'a');
    expect(calls.map((c) => c.group)).toEqual([['a']]);
    calls[0].answer();
    await expect(a).resolves.toBe('row:a');
    expect(group.waitingFor('s1')).toBe(0);
    // nothing in flight any more: the next one is written at once too
    const b = group.submit('s1', 'b');
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b']]);
    calls[1].answer();
    await expect(b).resolves.toBe('row:b');
  });

  it('groups the accepts that arrive during a statement into the next one, in arrival order, each with its own result', async () => {
    const { calls, write } = heldWrites();
    const group = new AcceptGroup(write);
    const first = group.submit('s1', 'a');
    const later = ['b', 'c', 'd'].map((x) => group.submit('s1', x));
    expect(calls).toHaveLength(1);
    expect(group.waitingFor('s1')).toBe(3);
    calls[0].answer();
    await expect(first).resolves.toBe('row:a');
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b', 'c', 'd']]);
    // one arriving during the second statement waits for it
    const e = group.submit('s1', 'e');
    expect(calls).toHaveLength(2);
    calls[1].answer();
    expect(await Promise.all(later)).toEqual(['row:b', 'row:c', 'row:d']);
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    calls[2].answer();
    await expect(e).resolves.toBe('row:e');
  });

  it('keeps keys apart: another session is written at once while one is in flight', () => {
    const { calls, write } = heldWrites();
    const group = new AcceptGroup(write);
    void group.submit('s1', 'a');
    void group.submit('s1', 'b');
    void group.submit('s2', 'x');
    expect(calls.map((c) => c.group)).toEqual([['a'], ['x']]);
    expect([group.waitingFor('s1'), group.waitingFor('s2')]).toEqual([1, 0]);
  });

  it('caps a group; the rest follow in the next statements, in order', async () => {
    const { calls, write } = heldWrites();
    const group = new AcceptGroup(write, { max: 2 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((x) => group.submit('s1', x));
    for (let i = 0; i < 3; i++) {
      calls[i].answer();
      await settle();
    }
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
    expect(await Promise.all(all)).toEqual(['row:a', 'row:b', 'row:c', 'row:d', 'row:e']);
  });

  it('bounds a group by weight (media bytes): one heavier than the bound goes alone, the others while the sum fits', async () => {
    const { calls, write } = heldWrites();
    const group = new AcceptGroup(write, { maxWeight: 10, weightOf: (item: string) => Number(item.split(':')[1]) });
    const all = ['a:0', 'b:4', 'c:6', 'd:1', 'e:30', 'f:2'].map((x) => group.submit('s1', x));
    for (let i = 0; i < 5; i++) {
      calls[i].answer();
      await settle();
    }
    expect(calls.map((c) => c.group)).toEqual([['a:0'], ['b:4', 'c:6'], ['d:1'], ['e:30'], ['f:2']]);
    expect(await Promise.all(all)).toHaveLength(6);
  });

  it('a failed statement fails its group only: the accepts waiting behind it are written next', async () => {
    const { calls, write } = heldWrites();
    const group = new AcceptGroup(write);
    // settled as values, so a rejection reached before its turn is seen as a failure of the test, not of the process
    const outcome = (item: string) => group.submit('s1', item).then((row) => row, (err: Error) => `failed: ${err.message}`);
    const a = outcome('a');
    const b = outcome('b');
    const c = outcome('c');
    calls[0].fail(new Error('connection reset'));
    expect(await a).toBe('failed: connection reset');
    expect(calls.map((x) => x.group)).toEqual([['a'], ['b', 'c']]);
    const d = outcome('d');
    calls[1].fail(new Error('deadlock'));
    expect([await b, await c]).toEqual(['failed: deadlock', 'failed: deadlock']);
    calls[2].answer();
    expect(await d).toBe('row:d');
    expect(group.waitingFor('s1')).toBe(0);
  });

  it('fails a group whose write answers another number of results, and one whose write throws before its promise', async () => {
    const short = new AcceptGroup<string, string>(async () => ['only one']);
    const one = short.submit('s1', 'a');
    const two = short.submit('s1', 'b');
    const three = short.submit('s1', 'c');
    await expect(one).resolves.toBe('only one');
    await expect(two).rejects.toThrow('an accept group of 2 got 1 results');
    await expect(three).rejects.toThrow('an accept group of 2 got 1 results');
    const thrown = new AcceptGroup<string, string>(() => {
      throw new Error('bad parameters');
    });
    await expect(thrown.submit('s1', 'a')).rejects.toThrow('bad parameters');
    expect(thrown.waitingFor('s1')).toBe(0);
  });
});
