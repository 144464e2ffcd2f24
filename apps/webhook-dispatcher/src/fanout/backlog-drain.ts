import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventEnvelope } from '@app/contracts';
import { EventStream, ParkedEntry, StreamEntry } from '@app/events';
import type { ReadAhead } from './read-ahead';
import type { EventFanout } from './event-fanout';
import type { EventSpill } from './event-spill';

/** The stream side of the backlogs: per-organization backlog streams of the dispatchers' group (EventStream). */
export type BacklogStreams = Pick<EventStream, 'park' | 'backlogs' | 'readBacklog' | 'claimBacklog' | 'ackBacklog'>;

/** Entries of a backlog written due (spilled) per statement. */
export const SPILL_COUNT = 2000;
/** A drain pass that found nothing to do waits this long (or until something is parked). */
const IDLE_MS = 200;
const CLAIM_EVERY_MS = 5_000;

/**
 * One organization's backlog must never sit in front of another's fresh events (issue 37). The consumer reads the one
 * shared stream; the events of an organization that holds its share of the read-ahead while its attempts do not move
 * (or while the read-ahead stays full) are **parked**: moved, in one Redis script per batch, to that organization's
 * backlog stream and acknowledged on the shared one — microseconds per entry, no PostgreSQL on the reader's path, so
 * the reader reaches the next organization's entries as fast as Redis hands them out. From then on the organization's
 * new events are parked behind its backlog until the backlog is empty.
 *
 * This drain empties the backlog streams beside the reader, organization by organization: an organization whose
 * attempts move again and hold less than its share gets entries back in memory (claimed rows first, then its POSTs);
 * a stalled or full one gets them written as due rows with low-priority jobs (EventSpill), 2,000 per statement. A
 * backlog entry is acknowledged (and deleted) only after its rows are committed; one a dead dispatcher left pending is
 * taken over once idle longer than a lease; a backlog Redis lost is fanned out from the outbox by the reconciler.
 */
export class BacklogDrain {
  /** organizations this dispatcher parked events of and has not yet seen drained: their new events are parked too */
  private readonly parked = new Set<string>();
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private lastClaimAt = 0;

  constructor(
    /** on the shared connection: nothing here blocks */
    private readonly stream: BacklogStreams,
    private readonly fanout: Pick<EventFanout, 'fanOut'>,
    private readonly spill: Pick<EventSpill, 'spill'>,
    private readonly readAhead: Omit<ReadAhead, 'room'>,
    private readonly log: Logger,
    /** idle time after which another consumer's pending backlog entry is taken over: longer than a lease */
    private readonly claimIdleMs = 15_000,
    private readonly consumer = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
  ) {}

  /** Whether an organization's events go behind its backlog (parked) rather than the fresh way. */
  isParked(organizationId: string): boolean {
    return this.parked.has(organizationId);
  }

  /** Moves these entries to their organizations' backlog streams; the shared stream's entries are acknowledged with it. */
  async park(entries: readonly { envelope: EventEnvelope; entryIds: string[]; text: string }[]): Promise<void> {
    const byOrg = new Map<string, ParkedEntry[]>();
    for (const e of entries) {
      const org = e.envelope.organizationId;
      let list = byOrg.get(org);
      if (!list) byOrg.set(org, (list = []));
      // an event appended twice: both entries move (the drain fans it out once per read, ON CONFLICT the second time)
      for (const entryId of e.entryIds) list.push({ entryId, text: e.text });
    }
    await this.stream.park(byOrg);
    for (const org of byOrg.keys()) this.parked.add(org);
    this.wake?.();
  }

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let busy = false;
      try {
        busy = await this.pass();
      } catch (err) {
        this.log.error({ err }, 'backlog drain pass failed');
      }
      if (!busy && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = null;
      }
    }
  }

  /** One turn over the organizations with a backlog; true when it moved anything. */
  async pass(): Promise<boolean> {
    const orgs = await this.stream.backlogs();
    for (const org of this.parked) if (!orgs.includes(org)) this.parked.delete(org);
    const claim = Date.now() - this.lastClaimAt > CLAIM_EVERY_MS;
    if (claim) this.lastClaimAt = Date.now();
    let busy = false;
    for (const org of orgs) {
      if (!this.running) break;
      if (claim) {
        const abandoned = await this.stream.claimBacklog(this.consumer, org, this.claimIdleMs, SPILL_COUNT);
        if (abandoned.length) {
          this.log.info({ count: abandoned.length }, 'took over backlog entries left pending by another dispatcher');
          // either way is safe for rows the other dispatcher may have written (ON CONFLICT DO NOTHING)
          await this.settle(org, abandoned, this.room(org) > 0);
          busy = true;
        }
      }
      const room = this.room(org);
      const entries = await this.stream.readBacklog(this.consumer, org, room > 0 ? room : SPILL_COUNT);
      if (entries.length === 0) {
        // empty (or all of it pending elsewhere): an emptied stream is removed and its organization reads fresh again
        if ((await this.stream.ackBacklog(org, [])) === 0) this.parked.delete(org);
        continue;
      }
      busy = true;
      await this.settle(org, entries, room > 0);
    }
    return busy;
  }

  /**
   * How many of an organization's backlog entries may come back into memory: what is left of its share while its
   * attempts move and the read-ahead has room; 0 means spill.
   */
  private room(org: string): number {
    if (this.readAhead.stalled(org) || this.readAhead.held() >= this.readAhead.max) return 0;
    return Math.max(0, this.readAhead.share - this.readAhead.heldOf(org));
  }

  private async settle(org: string, entries: StreamEntry[], inMemory: boolean): Promise<void> {
    const envelopes = new Map<string, EventEnvelope>();
    for (const [entryId, fields] of entries) {
      try {
        const envelope = JSON.parse(EventStream.envelopeOf(fields)!) as EventEnvelope;
        if (envelope && typeof envelope.id === 'string') envelopes.set(envelope.id, envelope);
      } catch {
        this.log.error({ entryId }, 'unreadable backlog entry skipped (the outbox still has the event)');
      }
    }
    try {
      // both ways write the rows before the acknowledgement: claimed rows (then POSTs) or due rows (then jobs)
      if (inMemory) await this.fanout.fanOut([...envelopes.values()]);
      else await this.spill.spill([...envelopes.values()]);
    } catch (err) {
      // left pending: taken over later, or fanned out from the outbox by the reconciler
      this.log.error({ err, events: envelopes.size }, 'backlog events not written; their entries stay pending');
      return;
    }
    await this.stream.ackBacklog(
      org,
      entries.map(([id]) => id),
    );
  }
}
