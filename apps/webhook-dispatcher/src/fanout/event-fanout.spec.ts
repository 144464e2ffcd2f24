import pino from 'pino';
import type { EventEnvelope } from '@app/contracts';
import { envelopeBody } from '../delivery/delivery-request';
import type { HeldAttempt } from '../delivery/delivery-sender';
import type { EventRows } from '../delivery/event-rows';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import type { NewDelivery } from '@app/database';
import { EventFanout, FreshRows, firstAttempts, planDeliveries } from './event-fanout';
import { EventTracker } from './event-tracker';

const hook = (id: string): WebhookTarget => ({
  id,
  organizationId: 'org_1',
  url: `https://receiver.example/${id}`,
  events: ['*'],
  sessionId: null,
  active: true,
  customHeaders: {},
  retryPolicy: { policy: 'constant', delaySeconds: 1, attempts: 3 },
  rateLimitPerSecond: null,
  failingSince: null,
  disabledAt: null,
  kind: 'http',
  target: {},
  secret: null,
});

const envelope = (id: string): EventEnvelope => ({
  id,
  event: 'message.received',
  organizationId: 'org_1',
  sessionId: null,
  timestamp: 1700000000000,
  payload: { text: id },
});

describe('planDeliveries', () => {
  it('plans one delivery per matching webhook and event, sorted by webhook then event', () => {
    const directory = { match: (e: EventEnvelope) => (e.id === 'evt_b' ? [hook('whk_2'), hook('whk_1')] : [hook('whk_2')]) };
    const planned = planDeliveries([envelope('evt_c'), envelope('evt_b'), envelope('evt_a')], directory);
    expect(planned.map((p) => `${p.webhook.id}/${p.envelope.id}`)).toEqual(['whk_1/evt_b', 'whk_2/evt_a', 'whk_2/evt_b', 'whk_2/evt_c']);
    expect(new Set(planned.map((p) => p.id)).size).toBe(4);
    expect(planned.every((p) => /^dlv_[0-9A-HJKMNP-TV-Z]{26}$/.test(p.id))).toBe(true);
  });
});

describe('firstAttempts', () => {
  it('makes attempt 1 of the rows this fan-out created only, sharing one body Buffer per event', () => {
    const directory = { match: () => [hook('whk_1'), hook('whk_2'), hook('whk_3')] };
    const planned = planDeliveries([envelope('evt_a'), envelope('evt_b')], directory);
    // the row of whk_3/evt_a already existed (a re-read event): it is not sent again
    const created = planned.filter((p) => !(p.webhook.id === 'whk_3' && p.envelope.id === 'evt_a')).map((p) => p.id);
    const attempts = firstAttempts(planned, 42, { created });
    expect(attempts).toHaveLength(5);
    expect(attempts.every((a) => a.attemptNo === 1 && a.attemptBase === 0 && a.leaseUntil === 42 && a.inserted === undefined)).toBe(true);
    const forA = attempts.filter((a) => a.eventId === 'evt_a');
    expect(forA).toHaveLength(2);
    expect(forA[0].body).toBe(forA[1].body);
    expect(forA[0].body.equals(envelopeBody(envelope('evt_a')))).toBe(true);
    const forB = attempts.filter((a) => a.eventId === 'evt_b');
    expect(new Set(forB.map((a) => a.body)).size).toBe(1);
    expect(forB[0].body).not.toBe(forA[0].body);
  });
});

/** The store's writer as the fan-out sees it: each row's insert waits until the test commits it. */
function fakeRows() {
  const inserts: { delivery: NewDelivery; event: EventRows; commit: (created: boolean) => void }[] = [];
  const parked: { delivery: NewDelivery; event: EventRows }[] = [];
  const marked: EventRows[] = [];
  const rows: FreshRows & { flushSoon: jest.Mock } = {
    insertClaimed: (delivery, event) => new Promise<boolean>((commit) => inserts.push({ delivery, event, commit })),
    park: async (delivery, event) => {
      parked.push({ delivery, event });
      return true;
    },
    markFannedOut: async (event) => void marked.push(event),
    flushSoon: jest.fn(),
  };
  return { rows, inserts, parked, marked };
}

describe('EventFanout.fanOutFresh', () => {
  it('queues every row claimed before any call, marks events without webhooks, and acknowledges the events whose rows all landed', async () => {
    const sent: HeldAttempt[] = [];
    const acked: string[] = [];
    const created: number[] = [];
    const directory = { match: (e: EventEnvelope) => (e.id === 'evt_none' ? [] : [hook('whk_1'), hook('whk_2')]), settled: async () => undefined };
    const deliveries = { insertClaimed: jest.fn(async () => [] as string[]) };
    const tracker = new EventTracker({ ack: async (ids) => void acked.push(...ids) }, pino({ level: 'silent' }));
    const { rows, inserts, marked } = fakeRows();
    const fanout = new EventFanout(deliveries, directory, { sendAll: (a) => sent.push(...a) }, 5000, rows, (n) => created.push(n), () => 1000);
    const entryIds = new Map([['evt_a', ['1-0']], ['evt_none', ['2-0']], ['evt_b', ['3-0']]]);
    await fanout.fanOutFresh([envelope('evt_a'), envelope('evt_none'), envelope('evt_b')], (r) => tracker.track(entryIds, r));
    expect(deliveries.insertClaimed).not.toHaveBeenCalled();
    // one insert per row, queued together and flushed at once; each attempt waits for its own row
    expect(inserts.map((i) => `${i.delivery.webhookId}/${i.delivery.eventId}`)).toEqual(['whk_1/evt_a', 'whk_1/evt_b', 'whk_2/evt_a', 'whk_2/evt_b']);
    expect(rows.flushSoon).toHaveBeenCalledTimes(1);
    expect(sent.map((a) => a.deliveryId)).toEqual(inserts.map((i) => i.delivery.deliveryId));
    expect(sent.every((a) => a.inserted !== undefined && a.leaseUntil === 6000)).toBe(true);
    inserts[0].commit(true);
    inserts[2].commit(false);
    expect(await sent[0].inserted).toBe(true);
    expect(await sent[2].inserted).toBe(false);
    // only the row created counts as fanned out
    expect(created).toEqual([1]);
    expect(marked.map((e) => e.eventId)).toEqual(['evt_none']);
    marked[0].written(0);
    const eventOf = (id: string) => inserts.find((i) => i.delivery.eventId === id)!.event;
    eventOf('evt_a').written(2);
    eventOf('evt_b').fail();
    await tracker.drain();
    // the entries of evt_a and evt_none; evt_b's stays pending for a takeover
    expect(acked.sort()).toEqual(['1-0', '2-0']);
  });
});

describe('EventFanout: a switched-off webhook', () => {
  const off = { ...hook('whk_off'), active: false, disabledAt: 1700000000000 };
  const paused = { ...hook('whk_paused'), active: false };

  it('records a parked row for each of its events instead of an attempt; the event is acknowledged once its rows land', async () => {
    const sent: HeldAttempt[] = [];
    const parked: { deliveryId: string; webhookId: string; event: EventRows }[] = [];
    const acked: string[] = [];
    const directory = { match: () => [hook('whk_1'), off, paused], settled: async () => undefined };
    const tracker = new EventTracker({ ack: async (ids) => void acked.push(...ids) }, pino({ level: 'silent' }));
    const fake = fakeRows();
    const fanout = new EventFanout({ insertClaimed: jest.fn(async () => [] as string[]) }, directory, { sendAll: (a) => sent.push(...a) }, 5000, fake.rows);
    await fanout.fanOutFresh([envelope('evt_a')], (rows) => tracker.track(new Map([['evt_a', ['1-0']]]), rows));
    expect(sent.map((a) => a.webhook.id)).toEqual(['whk_1']);
    for (const p of fake.parked) parked.push({ deliveryId: p.delivery.deliveryId, webhookId: p.delivery.webhookId, event: p.event });
    expect(parked.map((p) => p.webhookId).sort()).toEqual(['whk_off', 'whk_paused']);
    // three rows for the event: the claimed one's and the two parked
    fake.inserts[0].event.written(1);
    await new Promise((r) => setImmediate(r));
    expect(acked).toEqual([]);
    parked[0].event.written(2);
    await tracker.drain();
    expect(acked).toEqual(['1-0']);
  });

  it('inserts claimed rows and parked rows in one statement, and attempts only the claimed ones it created', async () => {
    const sent: HeldAttempt[] = [];
    const insertClaimed = jest.fn(async (rows: { deliveryId: string }[]) => rows.map((r) => r.deliveryId));
    const directory = { match: () => [hook('whk_1'), off], settled: async () => undefined };
    const fanout = new EventFanout({ insertClaimed }, directory, { sendAll: (a) => sent.push(...a) }, 5000, fakeRows().rows);
    expect(await fanout.fanOut([envelope('evt_a')])).toBe(2);
    const [rows, , , parkedIds] = insertClaimed.mock.calls[0] as unknown as [{ deliveryId: string; webhookId: string }[], string[], number, Set<string>];
    expect(rows.map((r) => r.webhookId)).toEqual(['whk_1', 'whk_off']);
    expect([...parkedIds]).toEqual([rows[1].deliveryId]);
    expect(sent.map((a) => a.webhook.id)).toEqual(['whk_1']);
  });
});
