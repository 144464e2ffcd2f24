import { EndTurn, SendPriority } from './send-priority';

/** Campaign work that records when it started; its turn ends when the test says. */
function asker(priority: SendPriority, started: string[], name: string): Promise<EndTurn> {
  return priority.campaignTurn().then((end) => {
    started.push(name);
    return end;
  });
}

/** Lets every promise continuation that can run, run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SendPriority', () => {
  afterEach(() => jest.useRealTimers());

  it('starts campaign work at once when no ordinary send is under way, at most `slots` at a time, oldest first', async () => {
    const priority = new SendPriority({ slots: 2, maxWaitMs: 250 });
    const started: string[] = [];
    const a = asker(priority, started, 'a');
    const b = asker(priority, started, 'b');
    void asker(priority, started, 'c');
    await settle();
    expect(started).toEqual(['a', 'b']);
    expect(priority.state()).toEqual({ ordinary: 0, running: 2, waiting: 1 });
    const endB = await b;
    endB();
    endB();
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    expect(priority.state()).toEqual({ ordinary: 0, running: 2, waiting: 0 });
    (await a)();
    expect(priority.state().running).toBe(1);
  });

  it('holds campaign work while an ordinary send is under way and starts it when the last one ends', async () => {
    const priority = new SendPriority({ slots: 2, maxWaitMs: 60_000 });
    const started: string[] = [];
    const endFirst = priority.ordinaryStarted();
    const endSecond = priority.ordinaryStarted();
    void asker(priority, started, 'step');
    await settle();
    expect(started).toEqual([]);
    endFirst();
    endFirst();
    await settle();
    expect(started).toEqual([]);
    endSecond();
    await settle();
    expect(started).toEqual(['step']);
  });

  it('starts campaign work after maxWaitMs when ordinary sends never stop (campaigns still move)', async () => {
    jest.useFakeTimers();
    let now = 1_000;
    const priority = new SendPriority({ slots: 1, maxWaitMs: 250, clock: () => now });
    const started: string[] = [];
    priority.ordinaryStarted();
    void asker(priority, started, 'first');
    now += 100;
    void asker(priority, started, 'second');
    now += 149;
    jest.advanceTimersByTime(149);
    await Promise.resolve();
    expect(started).toEqual([]);
    now += 1;
    jest.advanceTimersByTime(1);
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toEqual(['first']);
    expect(priority.state()).toEqual({ ordinary: 1, running: 1, waiting: 1 });
  });
});
