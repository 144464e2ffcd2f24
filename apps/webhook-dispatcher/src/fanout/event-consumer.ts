import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventEnvelope } from '@app/contracts';
import { EventStream, StreamEntry } from '@app/events';
import type { BacklogDrain } from './backlog-drain';
import type { EventFanout } from './event-fanout';
import type { EventTracker } from './event-tracker';
import { EntryGroup, ReadAhead, spillOut } from './read-ahead';

/** The stream side the consumer reads: the dispatchers' group (EventStream). */
export type GroupReader = Pick<EventStream, 'ensureGroup' | 'readGroup' | 'claimIdle' | 'ack'>;

/** Stream entries read (and fanned out in one statement) at a time. */
export const READ_COUNT = 500;
const BLOCK_MS = 1000;
const CLAIM_EVERY_MS = 5_000;
/**
 * An entry older than this when read goes the claimed way (one statement of its own, awaited before the next read):
 * the reconciler may be fanning its event out from the outbox already (FANOUT_GRACE_MS), and its acknowledgement
 * should not wait behind the batched writer. Both ways insert the rows before any call, so the two never both POST.
 */
export const FRESH_ENTRY_MS = 3000;
/**
 * The read-ahead full for this long (the attempts held are not moving: a slow or hung receiver's backlog) makes the
 * consumer read on without waiting for room, parking the events of organizations that hold their share of it.
 */
export const CONGESTED_AFTER_MS = 500;

/**
 * Reads the event stream as one consumer of the dispatchers' group, so replicas share the work:
 * XREADGROUP, fan-out, and on to the next batch while those attempts are in flight. Every row is inserted claimed
 * before its call. A fresh entry's rows go to the batched writer, and it is acknowledged once every row of its event
 * is committed; a late entry, one taken over or a test send is fanned out in a statement of its own and acknowledged
 * once that is committed. Entries a dead consumer left pending are taken over with XAUTOCLAIM once idle longer than a
 * lease (a live consumer acknowledges its entries as soon as their rows are committed). Unacknowledged
 * entries are never lost: they stay pending, and the outbox row stays un-fanned-out for the reconciler.
 *
 * One organization's backlog never holds the reader: the events of an organization holding its share of the
 * read-ahead while its attempts do not move (stalled: its webhooks hang, their breakers are open, disabled) or once
 * the read-ahead stays full (CONGESTED_AFTER_MS), are parked in its backlog stream (BacklogDrain: one Redis script
 * appends them there and acknowledges them here; no PostgreSQL on the reader's path), while every other
 * organization's events go the fresh way at once.
 */
export class EventConsumer {
  private readonly consumer = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private running = false;
  private loop: Promise<void> | null = null;
  private lastClaimAt = 0;
  /** the read-ahead stayed full: read on, parking the organizations that hold their share */
  private congested = false;
  private room: Promise<number> | null = null;
  private readingPast = false;

  constructor(
    /** on a dedicated connection: XREADGROUP BLOCK holds it */
    private readonly stream: GroupReader,
    private readonly fanout: Pick<EventFanout, 'fanOut' | 'fanOutFresh'>,
    /** owns the fresh events' completion and acknowledgement */
    private readonly tracker: Pick<EventTracker, 'track'>,
    private readonly log: Logger,
    private readonly readAhead: ReadAhead,
    /** parks the events read past a backlog in their organizations' backlog streams, and drains those */
    private readonly backlog: Pick<BacklogDrain, 'park' | 'isParked' | 'start' | 'stop'>,
    /** waits for the spilled rows' job adds (at shutdown) */
    private readonly spill: { drain(): Promise<void> },
    /** idle time after which another consumer's pending entry is taken over: longer than a lease */
    private readonly claimIdleMs = 15_000,
    private readonly clock: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    // '$' on first creation: events published before any dispatcher existed are in the outbox,
    // and the reconciler fans them out
    await this.stream.ensureGroup('$');
    this.running = true;
    this.loop = this.run();
    this.backlog.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.backlog.stop();
    await this.spill.drain();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        // the previous batch's attempts are still in flight: read on while they leave room
        const room = await this.waitForRoom();
        if (!this.running) break;
        if (Date.now() - this.lastClaimAt > CLAIM_EVERY_MS) await this.claimAbandoned();
        const count = this.readingPast ? 4 * READ_COUNT : Math.min(READ_COUNT, room ?? READ_COUNT);
        await this.handle(await this.stream.readGroup(this.consumer, count, BLOCK_MS), false);
      } catch (err) {
        if (EventStream.isMissingGroup(err)) {
          // the stream (or all of Redis) was lost: start over on whatever the stream holds now
          this.log.warn('event stream consumer group missing; recreating it');
          await this.stream.ensureGroup('0').catch(() => undefined);
          continue;
        }
        if (!this.running) break;
        this.log.error({ err }, 'event stream read failed');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /**
   * Waits for room in the read-ahead, at most CONGESTED_AFTER_MS, and says how many attempts it has room for; without
   * room by then the consumer is congested and reads on at once (null), as long as there is still none.
   */
  private async waitForRoom(): Promise<number | null> {
    this.room ??= this.readAhead.room().then((n) => {
      this.room = null;
      return n;
    });
    let timer: NodeJS.Timeout | undefined;
    const room = await Promise.race([
      this.room,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), this.congested ? 0 : CONGESTED_AFTER_MS))),
    ]);
    clearTimeout(timer);
    if (room === null && !this.congested) this.log.info({ held: this.readAhead.held() }, 'read-ahead full: reading on, parking the events of organizations holding their share');
    this.congested = room === null;
    return room;
  }

  private async claimAbandoned(): Promise<void> {
    this.lastClaimAt = Date.now();
    let cursor = '0-0';
    do {
      const { next, entries } = await this.stream.claimIdle(this.consumer, this.claimIdleMs, cursor, READ_COUNT);
      if (entries.length) {
        this.log.info({ count: entries.length }, 'took over event entries left pending by another dispatcher');
        await this.handle(entries, true);
      }
      cursor = next;
    } while (cursor !== '0-0' && this.running);
  }

  private async handle(entries: StreamEntry[], takenOver: boolean): Promise<void> {
    if (entries.length === 0) return;
    const sorted = sortEntries(entries, takenOver, this.clock() - FRESH_ENTRY_MS, (id) =>
      this.log.error({ entryId: id }, 'unreadable stream entry skipped (the outbox still has the event)'),
    );
    const { fresh, claimed, ackNow } = sorted;
    const spilled = spillOut([fresh, claimed], this.readAhead, this.congested, (org) => this.backlog.isParked(org), claimed);
    // most of the batch was read past a backlog: read a bigger one next (one script and one XACK for it)
    this.readingPast = spilled.length * 2 >= entries.length;
    if (spilled.length) {
      try {
        // first, so the reader is past them at once: moved to their backlog streams and acknowledged in one script
        await this.backlog.park(spilled);
      } catch (err) {
        // left pending: taken over later (or fanned out from the outbox by the reconciler)
        this.log.error({ err, events: spilled.length }, 'events read past a backlog not parked; their entries stay pending');
      }
    }
    if (fresh.size) {
      const entryIds = new Map([...fresh].map(([id, f]) => [id, f.entryIds]));
      await this.fanout.fanOutFresh([...fresh.values()].map((f) => f.envelope), (rows) => this.tracker.track(entryIds, rows));
    }
    if (claimed.size) {
      // acknowledged once the delivery rows are committed: from here the rows are the record
      await this.fanout.fanOut([...claimed.values()].map((c) => c.envelope));
      for (const c of claimed.values()) ackNow.push(...c.entryIds);
    }
    await this.stream.ack(ackNow);
  }
}

/**
 * Splits a batch of entries: fresh ones (their rows go to the batched writer) and the ones fanned out in a
 * statement of their own — taken over from another consumer, older than `freshAfter` (epoch ms from
 * the entry id), or a test send (the API inserts that row itself). An event appended twice is fanned
 * out once; both entries are acknowledged with it. Unreadable entries are acknowledged at once.
 */
export function sortEntries(
  entries: StreamEntry[],
  takenOver: boolean,
  freshAfter: number,
  onUnreadable: (entryId: string) => void = () => undefined,
): { fresh: Map<string, EntryGroup>; claimed: Map<string, EntryGroup>; ackNow: string[] } {
  const fresh = new Map<string, EntryGroup>();
  const claimed = new Map<string, EntryGroup>();
  const ackNow: string[] = [];
  for (const [entryId, fields] of entries) {
    let envelope: EventEnvelope;
    let text: string;
    try {
      text = EventStream.envelopeOf(fields)!;
      envelope = JSON.parse(text) as EventEnvelope;
      if (!envelope || typeof envelope.id !== 'string') throw new Error('no event id');
    } catch {
      onUnreadable(entryId);
      ackNow.push(entryId);
      continue;
    }
    const seen = fresh.get(envelope.id) ?? claimed.get(envelope.id);
    if (seen) {
      seen.entryIds.push(entryId);
      continue;
    }
    const late = Number(entryId.slice(0, entryId.indexOf('-'))) < freshAfter;
    const target = takenOver || late || envelope.event === 'webhook.test' ? claimed : fresh;
    target.set(envelope.id, { envelope, entryIds: [entryId], text });
  }
  return { fresh, claimed, ackNow };
}
