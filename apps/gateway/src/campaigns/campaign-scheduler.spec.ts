import pino from 'pino';
import type { CampaignsRepository, MessageQueueRepository } from '@app/database';
import { CampaignScheduler, CampaignSchedulerDeps } from './campaign-scheduler';

/**
 * The tick's reads of scheduled sends (docs/campaigns.md, "Cost per tick"): a tick woken only by a settled campaign
 * message reads the campaigns, not the scheduled sends again, until the time the last read said to look again.
 */
describe('CampaignScheduler: reads of scheduled sends', () => {
  function setup(scheduledAt: number | null) {
    let now = 100_000;
    const reads = { dueSessions: 0, nextAt: 0, campaigns: 0 };
    const faults = { failRead: false };
    const queue = {
      sessionsWithDueScheduled: async () => {
        reads.dueSessions += 1;
        return [];
      },
      nextScheduledAt: async () => {
        if (faults.failRead) throw new Error('connection terminated');
        reads.nextAt += 1;
        return scheduledAt;
      },
    };
    const campaigns = {
      due: async () => {
        reads.campaigns += 1;
        return { due: [], nextAt: null };
      },
    };
    const scheduler = new CampaignScheduler({
      campaigns: campaigns as unknown as CampaignsRepository,
      queue: queue as unknown as MessageQueueRepository,
      logger: pino({ level: 'silent' }),
      optOutKeywords: [],
      maxSleepMs: 1000,
      clock: () => now,
    } as Partial<CampaignSchedulerDeps> as CampaignSchedulerDeps);
    let held = ['ses_1'];
    scheduler.attach({ activeSessionIds: () => held, runnerOf: () => undefined });
    return { scheduler, reads, faults, advance: (ms: number) => (now += ms), now: () => now, hold: (ids: string[]) => (held = ids) };
  }

  it('reads them on a first tick, not on a tick a settled message woke, and again once the time it found came', async () => {
    const t = setup(100_600);
    expect(await t.scheduler.tick()).toBe(100_600);
    expect(t.reads).toEqual({ dueSessions: 1, nextAt: 1, campaigns: 1 });
    t.scheduler.settled('cmp_1');
    t.advance(200);
    // the scheduled send found at 100,600 is still ahead: only the campaigns are read
    expect(await t.scheduler.tick()).toBe(100_600);
    expect(t.reads).toEqual({ dueSessions: 1, nextAt: 1, campaigns: 2 });
    t.advance(400);
    await t.scheduler.tick();
    expect(t.reads).toEqual({ dueSessions: 2, nextAt: 2, campaigns: 3 });
  });

  it('reads them again within maxSleepMs of the last read (a new scheduled send comes with no signal), and on any other wake', async () => {
    const t = setup(null);
    expect(await t.scheduler.tick()).toBe(t.now() + 1000);
    t.advance(999);
    await t.scheduler.tick();
    expect(t.reads.nextAt).toBe(1);
    t.advance(1);
    await t.scheduler.tick();
    expect(t.reads.nextAt).toBe(2);
    // a campaign signal (created, paused, resumed) or the timer: wake() reads everything again
    t.scheduler.wake();
    await t.scheduler.tick();
    expect(t.reads.nextAt).toBe(3);
    // a session taken over by this gateway: its scheduled sends are read at once
    t.hold(['ses_1', 'ses_2']);
    await t.scheduler.tick();
    expect(t.reads.nextAt).toBe(4);
  });

  it('reads them again at the next tick after a read failed', async () => {
    const t = setup(null);
    t.faults.failRead = true;
    await expect(t.scheduler.tick()).rejects.toThrow('connection terminated');
    t.faults.failRead = false;
    await t.scheduler.tick();
    expect(t.reads.nextAt).toBe(1);
  });
});
