import pino from 'pino';
import { OpenParkReleaser } from './resume-parked';

const log = pino({ level: 'silent' });

describe('OpenParkReleaser', () => {
  it('makes the deliveries an open breaker sent away due now and runs the job of each one\'s next attempt', async () => {
    const asked: [string, number][] = [];
    const ran: { deliveryId: string; attemptNo: number }[][] = [];
    const releaser = new OpenParkReleaser(
      {
        dueNowOfWebhook: async (webhookId: string, withinMs: number) => {
          asked.push([webhookId, withinMs]);
          return [
            { id: 'dlv_1', status: 'pending' as const, attempts: 0 },
            { id: 'dlv_2', status: 'pending' as const, attempts: 3 },
          ];
        },
      },
      { runNow: async (jobs) => void ran.push([...jobs]) },
      60_000,
      log,
    );
    expect(await releaser.release('whk_sink')).toBe(2);
    expect(asked).toEqual([['whk_sink', 60_000]]);
    expect(ran).toEqual([
      [
        { deliveryId: 'dlv_1', attemptNo: 1 },
        { deliveryId: 'dlv_2', attemptNo: 4 },
      ],
    ]);
  });

  it('runs a release asked for while one runs once more after it, not concurrently', async () => {
    let calls = 0;
    let running = 0;
    let maxRunning = 0;
    const gates: (() => void)[] = [];
    const releaser = new OpenParkReleaser(
      {
        dueNowOfWebhook: async () => {
          calls++;
          running++;
          maxRunning = Math.max(maxRunning, running);
          await new Promise<void>((r) => gates.push(r));
          running--;
          return [];
        },
      },
      { runNow: async () => undefined },
      60_000,
      log,
    );
    releaser.releaseSoon('whk_sink');
    releaser.releaseSoon('whk_sink');
    releaser.releaseSoon('whk_sink');
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(1);
    gates.shift()!();
    while (calls < 2) await new Promise((r) => setImmediate(r));
    gates.shift()!();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(2);
    expect(maxRunning).toBe(1);
  });
});
