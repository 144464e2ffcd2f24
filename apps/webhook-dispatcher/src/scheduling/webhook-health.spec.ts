import pino from 'pino';
import type { DisabledWebhook } from '@app/database';
import { Disabler, FailingRecord, WebhookHealth } from './webhook-health';

const log = pino({ level: 'silent' });
const settle = () => new Promise((r) => setImmediate(r));

/** webhooks.failing_since as PostgreSQL keeps it (earliest wins), and the disables asked for. */
function fakes() {
  const stored = new Map<string, number | null>();
  const calls: string[] = [];
  const record: FailingRecord = {
    markFailing: async (id, since) => {
      calls.push(`mark ${id}`);
      if (stored.get(id) == null) stored.set(id, since);
      return new Date(stored.get(id)!);
    },
    clearFailing: async (id) => {
      calls.push(`clear ${id}`);
      stored.set(id, null);
    },
  };
  const disabler: Disabler = {
    disable: async (id, failingForMs, reason): Promise<DisabledWebhook | null> => {
      calls.push(`disable ${id} ${failingForMs} ${reason}`);
      const since = stored.get(id);
      return since != null ? { id, organizationId: 'org_1', url: 'u', failingSince: new Date(since), disabledAt: new Date() } : null;
    },
  };
  return { stored, calls, record, disabler };
}

describe('WebhookHealth', () => {
  it('writes failing_since once per transition, and asks for a disable only once the stored failure is old enough', async () => {
    const f = fakes();
    let now = 1_000_000;
    const health = new WebhookHealth(f.record, f.disabler, 60_000, log, () => now);
    health.observe('whk_1', null, false, 'receiver answered 503');
    await settle();
    health.observe('whk_1', null, false, 'receiver answered 503');
    await settle();
    expect(f.calls).toEqual(['mark whk_1']);
    now += 60_000;
    health.observe('whk_1', null, false, 'receiver answered 503');
    await settle();
    // asked at most once a second
    health.observe('whk_1', null, false, 'receiver answered 503');
    await settle();
    expect(f.calls).toEqual(['mark whk_1', `disable whk_1 60000 failing continuously since ${new Date(1_000_000).toISOString()} (last: receiver answered 503)`]);
  });

  it('clears on a success, and relearns the stored state when a disable finds the webhook no longer failing', async () => {
    const f = fakes();
    let now = 1_000_000;
    const health = new WebhookHealth(f.record, f.disabler, 1000, log, () => now);
    // the directory's copy says another replica marked it failing long ago
    health.observe('whk_1', now - 5000, true, null);
    await settle();
    health.observe('whk_1', null, true, null);
    await settle();
    expect(f.calls).toEqual(['clear whk_1']);
    health.observe('whk_1', null, false, 'x');
    await settle();
    now += 2000;
    // meanwhile a success elsewhere cleared it: the disable does nothing, and the next failure marks it again
    f.stored.set('whk_1', null);
    health.observe('whk_1', null, false, 'x');
    await settle();
    health.observe('whk_1', null, false, 'x');
    await settle();
    expect(f.calls.slice(1)).toEqual(['mark whk_1', expect.stringMatching(/^disable whk_1 1000 /), 'mark whk_1']);
  });

  it('keeps no record when disabling is off', async () => {
    const f = fakes();
    const health = new WebhookHealth(f.record, f.disabler, 0, log);
    health.observe('whk_1', null, false, 'x');
    health.observe('whk_1', 5, true, null);
    await settle();
    expect(f.calls).toEqual([]);
  });
});
