import { WriteBatcher } from './write-batcher';

describe('WriteBatcher', () => {
  afterEach(() => jest.useRealTimers());

  it('lets a batch fill for the linger, flushes a full batch at once, and cuts the linger short on flushSoon', async () => {
    jest.useFakeTimers();
    const batches: number[][] = [];
    const b = new WriteBatcher(async (items: number[]) => (batches.push(items), items.map((i) => i * 2)), 3, 1, 50);
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
});
