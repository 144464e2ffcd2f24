import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { DISPATCHER_CONSUMER_GROUP, EVENT_STREAM, EventEnvelope } from '@app/contracts';
import type { EventFanout } from './event-fanout';

type StreamEntry = [id: string, fields: string[]];

/** Stream entries read (and fanned out in one statement) at a time. */
export const READ_COUNT = 500;
const BLOCK_MS = 1000;
/** An entry pending this long in another consumer belongs to a dead or stuck dispatcher. */
const CLAIM_IDLE_MS = 15_000;
const CLAIM_EVERY_MS = 5_000;

/**
 * Reads the event stream as one consumer of the dispatchers' group, so replicas share the work:
 * XREADGROUP, fan-out (rows committed, first attempts handed to the sender), XACK, and on to the next
 * batch while those attempts are in flight. Entries a dead consumer left pending are taken over with XAUTOCLAIM.
 * Unacknowledged entries are never lost: they stay pending, and the outbox row stays un-fanned-out
 * for the reconciler.
 */
export class EventConsumer {
  private readonly streamKey: string;
  private readonly consumer = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private running = false;
  private loop: Promise<void> | null = null;
  private lastClaimAt = 0;

  constructor(
    /** dedicated connection: XREADGROUP BLOCK holds it */
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly fanout: EventFanout,
    private readonly log: Logger,
    /** resolves when the attempts of earlier batches leave room for another batch */
    private readonly room: () => Promise<void> = () => Promise.resolve(),
  ) {
    this.streamKey = `${keyPrefix}:${EVENT_STREAM}`;
  }

  async start(): Promise<void> {
    // '$' on first creation: events published before any dispatcher existed are in the outbox,
    // and the reconciler fans them out
    await this.ensureGroup('$');
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async ensureGroup(startId: string): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.streamKey, DISPATCHER_CONSUMER_GROUP, startId, 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        // the previous batch's attempts are still in flight: read on while they leave room
        await this.room();
        if (!this.running) break;
        if (Date.now() - this.lastClaimAt > CLAIM_EVERY_MS) await this.claimAbandoned();
        const res = (await this.redis.xreadgroup(
          'GROUP', DISPATCHER_CONSUMER_GROUP, this.consumer,
          'COUNT', READ_COUNT, 'BLOCK', BLOCK_MS,
          'STREAMS', this.streamKey, '>',
        )) as [string, StreamEntry[]][] | null;
        if (res) for (const [, entries] of res) await this.handle(entries);
      } catch (err) {
        if (String((err as Error).message).includes('NOGROUP')) {
          // the stream (or all of Redis) was lost: start over on whatever the stream holds now
          this.log.warn('event stream consumer group missing; recreating it');
          await this.ensureGroup('0').catch(() => undefined);
          continue;
        }
        if (!this.running) break;
        this.log.error({ err }, 'event stream read failed');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private async claimAbandoned(): Promise<void> {
    this.lastClaimAt = Date.now();
    let cursor = '0-0';
    do {
      const [next, entries] = (await this.redis.xautoclaim(
        this.streamKey, DISPATCHER_CONSUMER_GROUP, this.consumer, CLAIM_IDLE_MS, cursor, 'COUNT', READ_COUNT,
      )) as [string, StreamEntry[], ...unknown[]];
      if (entries.length) {
        this.log.info({ count: entries.length }, 'took over event entries left pending by another dispatcher');
        await this.handle(entries.filter((e) => e && e[1]));
      }
      cursor = next;
    } while (cursor !== '0-0' && this.running);
  }

  private async handle(entries: StreamEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const envelopes: EventEnvelope[] = [];
    for (const [id, fields] of entries) {
      const i = fields.indexOf('envelope');
      try {
        envelopes.push(JSON.parse(fields[i + 1]) as EventEnvelope);
      } catch {
        this.log.error({ entryId: id }, 'unreadable stream entry skipped (the outbox still has the event)');
      }
    }
    // acknowledged once the delivery rows are committed: from here the rows are the record
    await this.fanout.fanOut(envelopes);
    await this.redis.xack(this.streamKey, DISPATCHER_CONSUMER_GROUP, ...entries.map((e) => e[0]));
  }
}
