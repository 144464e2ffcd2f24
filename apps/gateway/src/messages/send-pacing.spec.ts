import pino from 'pino';
import { MessageKeyRef, OutboundMessage, SentMessage } from '@app/contracts';
import { MemoryMessageStore } from '../../../../test/fakes/memory-message-store';
import { recordingEventSink } from '../../../../test/fakes/recording-event-sink';
import type { EngineConnection, GroupInfo } from '../engine/engine.interface';
import { OutboundSender } from './outbound-sender';
import { BacklogPacer, PACING_JITTER, pacingBounds, sessionRatePerMin } from './send-pacing';

/** The network, recording the fake clock's time of each send. */
class ClockedConnection implements EngineConnection {
  readonly sentAt: Array<[string, number]> = [];
  constructor(private readonly now: () => number) {}
  async send(message: OutboundMessage): Promise<SentMessage> {
    this.sentAt.push([message.waMessageId, this.now()]);
    return { waMessageId: message.waMessageId, timestamp: this.now(), raw: null };
  }
  async sendPresence() {}
  async markRead(_keys: MessageKeyRef[]) {}
  async perform(): Promise<never> {
    throw new Error('not used here');
  }
  async requestPairingCode() {
    return '';
  }
  async createGroup(): Promise<GroupInfo> {
    throw new Error('not used');
  }
  async logout() {}
  async close() {}
}

/** A sender whose sleep moves the fake clock: the recorded send times are the times the policy chose. */
function setup(ratePerMin: number, random: () => number = Math.random) {
  let now = 100_000;
  const store = new MemoryMessageStore();
  store.now = () => now;
  const conn = new ClockedConnection(() => now);
  let live: EngineConnection | null = conn;
  const rateReads: number[] = [];
  const hooks = { afterSleep: () => undefined as void };
  const sender = new OutboundSender({
    sessionId: 'ses_1',
    organizationId: 'org_1',
    store,
    events: recordingEventSink().sink,
    settings: { ttlMs: 3_600_000, typingMsPerChar: 40, typingMinMs: 500, typingMaxMs: 3000 },
    live: () => live,
    logger: pino({ level: 'silent' }),
    clock: () => now,
    sleep: async (ms) => {
      now += ms;
      hooks.afterSleep();
    },
    pacing: new BacklogPacer({ ratePerMin: async () => (rateReads.push(ratePerMin), ratePerMin), random }),
  });
  return { store, conn, sender, rateReads, hooks, advance: (ms: number) => (now += ms), setLive: (c: EngineConnection | null) => (live = c), now: () => now };
}

const gaps = (sentAt: Array<[string, number]>) => sentAt.slice(1).map(([, at], i) => at - sentAt[i][1]);

describe('BacklogPacer (issue 19 item 10)', () => {
  it('bounds: the mean gap is 60 s / ratePerMin, each gap within ±30 %', () => {
    expect(pacingBounds(20)).toEqual({ meanMs: 3000, minMs: 3000 * (1 - PACING_JITTER), maxMs: 3000 * (1 + PACING_JITTER) });
    expect(pacingBounds(0).meanMs).toBe(60_000);
  });

  it('sends a backlog after an outage at ratePerMin with jitter, the first at once, every gap within the bounds and not all equal', async () => {
    const t = setup(20);
    t.setLive(null);
    for (let i = 0; i < 12; i += 1) t.store.queue({ id: `msg_${String(i).padStart(2, '0')}`, waMessageId: `W${i}`, text: `backlog ${i}` });
    await t.sender.trigger();
    expect(t.conn.sentAt).toEqual([]);
    t.advance(60_000);
    const back = t.now();
    t.setLive(t.conn);
    await t.sender.trigger();
    expect(t.conn.sentAt.map(([id]) => id)).toEqual(Array.from({ length: 12 }, (_, i) => `W${i}`));
    expect(t.conn.sentAt[0][1]).toBe(back);
    const { minMs, maxMs } = pacingBounds(20);
    for (const gap of gaps(t.conn.sentAt)) {
      expect(gap).toBeGreaterThanOrEqual(minMs);
      expect(gap).toBeLessThanOrEqual(maxMs + 1);
    }
    expect(new Set(gaps(t.conn.sentAt)).size).toBeGreaterThan(1);
    expect(t.rateReads).toEqual([20]);
  });

  it('the jitter spans the bounds: the lowest and highest draws give the bounds exactly', async () => {
    const draws = [0, 0.999_999, 0.5];
    const t = setup(60, () => draws.shift() ?? 0.5);
    for (let i = 0; i < 4; i += 1) t.store.queue({ id: `msg_${i}`, waMessageId: `W${i}`, text: 'x' });
    t.advance(10);
    await t.sender.trigger();
    expect(gaps(t.conn.sentAt)).toEqual([700, 1300, 1000]);
  });

  it('does not pace what is accepted while the connection is up (the API limiter paced its acceptance)', async () => {
    const t = setup(20);
    await t.sender.trigger();
    t.store.queue({ id: 'msg_1', waMessageId: 'W1', text: 'live 1' });
    t.store.queue({ id: 'msg_2', waMessageId: 'W2', text: 'live 2' });
    t.store.queue({ id: 'msg_3', waMessageId: 'W3', text: 'live 3' });
    await t.sender.trigger();
    expect(gaps(t.conn.sentAt)).toEqual([0, 0]);
  });

  it('a new connection starts a new backlog (its first send at once) and reads the rate again', async () => {
    const t = setup(30);
    t.store.queue({ id: 'msg_1', waMessageId: 'W1', text: 'a' });
    t.store.queue({ id: 'msg_2', waMessageId: 'W2', text: 'b' });
    t.advance(5);
    await t.sender.trigger();
    expect(gaps(t.conn.sentAt)[0]).toBeGreaterThanOrEqual(pacingBounds(30).minMs);
    const second = new ClockedConnection(t.now);
    t.setLive(null);
    t.store.queue({ id: 'msg_3', waMessageId: 'W3', text: 'c' });
    t.store.queue({ id: 'msg_4', waMessageId: 'W4', text: 'd' });
    t.advance(5);
    t.setLive(second);
    const back = t.now();
    await t.sender.trigger();
    expect(second.sentAt[0]).toEqual(['W3', back]);
    expect(second.sentAt[1][1] - back).toBeGreaterThanOrEqual(pacingBounds(30).minMs);
    expect(t.rateReads).toEqual([30, 30]);
  });

  it('stops when the connection goes away during a wait (the row stays queued for the next connection)', async () => {
    const t = setup(20);
    t.store.queue({ id: 'msg_1', waMessageId: 'W1', text: 'a' });
    t.store.queue({ id: 'msg_2', waMessageId: 'W2', text: 'b' });
    t.advance(5);
    const pacer = new BacklogPacer({ ratePerMin: async () => 20, random: () => 0.5 });
    const conn = {};
    expect(await pacer.delayBefore({ createdAt: 0 }, conn, 1000)).toBe(0);
    pacer.sent(conn, 1000);
    expect(await pacer.delayBefore({ createdAt: 0 }, conn, 1500)).toBe(2500);
    // a send recorded for another connection does not move this one's rhythm
    pacer.sent({}, 9000);
    expect(await pacer.delayBefore({ createdAt: 0 }, conn, 1500)).toBe(2500);
    // the sender: the wait ends on another connection, so the second row is left queued
    const other = new ClockedConnection(t.now);
    t.hooks.afterSleep = () => void t.setLive(other);
    await t.sender.trigger();
    expect(t.conn.sentAt.map(([id]) => id)).toEqual(['W1']);
    expect(t.store.rows.find((r) => r.id === 'msg_2')?.status).toBe('queued');
  });

  it('reads the rate from the session row, and falls back to the default when the row cannot be read', async () => {
    expect(await sessionRatePerMin({ find: async () => ({ ratePerMin: 7 }) }, 's')).toBe(7);
    expect(await sessionRatePerMin({ find: async () => null }, 's')).toBe(20);
    expect(await sessionRatePerMin({ find: async () => Promise.reject(new Error('down')) }, 's')).toBe(20);
  });
});
