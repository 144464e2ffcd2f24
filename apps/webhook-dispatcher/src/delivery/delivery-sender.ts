import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { DELIVER_JOB, DeliverJobData, deliveryJobId } from '@app/contracts';
import type { DispatcherMetrics } from '../metrics';
import type { PendingEvent } from '../fanout/pending-event';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import { deliveryHeaders } from './delivery-request';
import type { AttemptRecord, DeliveryStore, RowWrite } from './delivery-store';
import { nextStep } from './retry-schedule';
import type { PostResult } from './webhook-client';

/** A first attempt is kept unwritten at most this long; past it, its row is claimed (with a lease) before the outcome. */
export const HOLD_AFTER_MS = 1000;

/**
 * The row of a fresh fan-out's first attempt, not written yet: `unwritten` until the outcome is known
 * (then `writing`, in its final state) or until the attempt has waited HOLD_AFTER_MS (then `holding` →
 * `held`, a claimed row under a lease, like any other attempt). `lost`: a row for the pair was there
 * already (someone else's record) or could not be written; the attempt is not made, or its outcome not recorded.
 */
export interface UnwrittenRow {
  event: PendingEvent;
  organizationId: string;
  eventType: string;
  state: 'unwritten' | 'writing' | 'holding' | 'held' | 'lost';
  hold?: { write: RowWrite; created: Promise<boolean> };
}

/**
 * An attempt this dispatcher holds: its delivery row is `delivering` with attempts = attemptNo under
 * a lease, or (a fresh fan-out's first attempt, `row` set) not written yet.
 */
export interface HeldAttempt {
  deliveryId: string;
  attemptNo: number;
  /** attempts made before the current retry budget (a replay starts a fresh one) */
  attemptBase: number;
  webhook: WebhookTarget;
  eventId: string;
  /** envelope timestamp, for the event-to-delivery latency */
  eventTimestamp: number;
  /** the envelope's bytes, shared by every webhook of the event; signed and sent as they are */
  body: Buffer;
  /** our clock's conservative view of the lease's end (taken before the statement that set it); Infinity while unwritten */
  leaseUntil: number;
  row?: UnwrittenRow;
  /** when the sender took it */
  heldSince?: number;
}

export interface Poster {
  post(url: string, headers: Record<string, string>, body: Buffer): Promise<PostResult>;
}

export interface DeliverySenderOptions {
  /** POSTs in flight at once, fan-out and retry jobs together */
  concurrency: number;
  timeoutMs: number;
  /** length of a lease from the statement that sets it (timeout + margin) */
  leaseMs: number;
}

/**
 * Makes held attempts: at most `concurrency` POSTs at a time, each signed over the event's shared
 * body; outcomes go to the store's batched writer, and a retry's delayed job is added only once its
 * next_attempt_at is committed. Attempts kept waiting for a slot (a slow receiver) get their leases
 * renewed, so the reconciler never mistakes a queued attempt for an abandoned one.
 */
export class DeliverySender {
  private active = 0;
  private readonly slots: (() => void)[] = [];
  private readonly held = new Set<HeldAttempt>();
  private readonly roomWaiters: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing = false;

  constructor(
    private readonly options: DeliverySenderOptions,
    private readonly store: DeliveryStore,
    private readonly queue: Pick<Queue<DeliverJobData>, 'add'>,
    private readonly client: Poster,
    private readonly metrics: DispatcherMetrics,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  start(): void {
    const every = Math.max(100, Math.min(1000, Math.floor((this.options.leaseMs - this.options.timeoutMs) / 4)));
    this.renewTimer = setInterval(() => {
      this.holdSlowRows();
      void this.renewLeases();
    }, every);
    this.renewTimer.unref();
  }

  /** Attempts held and not yet recorded (waiting for a slot, POSTing or being written). */
  get backlog(): number {
    return this.held.size;
  }

  /** Resolves when fewer than `limit` attempts are held: the fan-out reads ahead only that far. */
  whenBelow(limit: number): Promise<void> {
    if (this.held.size < limit) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.held.size < limit) resolve();
        else this.roomWaiters.push(check);
      };
      this.roomWaiters.push(check);
    });
  }

  /** Resolves once every held attempt is recorded (or given up). */
  idle(): Promise<void> {
    if (this.held.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    await this.idle();
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
  }

  /**
   * Fan-out's attempts: fire and forget. A failure to record leaves the row `delivering` with its
   * lease, which the reconciler takes back once the lease ends; a fresh row that could not be written
   * leaves its event un-fanned-out and its stream entry pending, for a takeover.
   */
  sendAll(attempts: HeldAttempt[]): void {
    for (const attempt of attempts) {
      this.send(attempt).catch((err) =>
        this.log.error({ err, deliveryId: attempt.deliveryId, attemptNo: attempt.attemptNo }, 'delivery attempt not recorded; it is redone (lease expiry or takeover)'),
      );
    }
  }

  /** Makes one attempt and records it; rejects when the outcome could not be written. */
  async send(attempt: HeldAttempt): Promise<void> {
    attempt.heldSince = this.clock();
    this.held.add(attempt);
    try {
      await this.acquire();
      if (attempt.row?.state === 'lost') {
        // its row belongs to someone else (or could not be claimed): that record decides
        this.release();
        return;
      }
      let result: PostResult;
      let startedAt: number;
      try {
        startedAt = this.clock();
        const headers = deliveryHeaders({
          eventId: attempt.eventId,
          body: attempt.body,
          secret: attempt.webhook.secret,
          customHeaders: attempt.webhook.customHeaders,
          now: startedAt,
        });
        result = await this.client.post(attempt.webhook.url, headers, attempt.body);
      } finally {
        this.release();
      }
      await this.finish(attempt, result, startedAt);
    } finally {
      // a row never handed to the writer: its event must not be marked fanned out without it
      if (attempt.row?.state === 'unwritten') attempt.row.event.fail();
      this.held.delete(attempt);
      this.wakeWaiters();
    }
  }

  private async finish(attempt: HeldAttempt, result: PostResult, startedAt: number): Promise<void> {
    const { deliveryId, attemptNo, webhook } = attempt;
    const finishedAt = this.clock();
    const step = nextStep(webhook.retryPolicy, attemptNo - attempt.attemptBase, result, finishedAt);
    const outcome: AttemptRecord = {
      deliveryId,
      attemptNo,
      status: step.kind === 'retry' ? 'pending' : step.kind,
      statusCode: result.statusCode,
      error: result.error,
      snippet: result.snippet,
      durationMs: result.durationMs,
      startedAt,
      nextAttemptAt: step.kind === 'retry' ? finishedAt + step.delayMs : null,
    };
    if (attempt.row) {
      // a duplicate POST of someone else's delivery: the receiver dedupes it by request id
      if (!(await this.writeFresh(attempt, attempt.row, outcome))) return;
    } else {
      await this.store.record(outcome);
    }
    if (step.kind === 'retry') {
      // next_attempt_at is committed: if this add is lost, the reconciler enqueues the due delivery
      await this.queue.add(
        DELIVER_JOB,
        { deliveryId, attemptNo: attemptNo + 1 },
        { jobId: deliveryJobId(deliveryId, attemptNo + 1), delay: step.delayMs },
      );
    }
    this.metrics.attemptSeconds.observe({ result: step.kind === 'delivered' ? 'success' : 'failure' }, result.durationMs / 1000);
    if (result.refused) this.metrics.outcomes.inc({ outcome: 'refused' });
    this.metrics.outcomes.inc({ outcome: step.kind });
    if (step.kind === 'delivered') {
      this.metrics.eventToDeliverySeconds.observe(Math.max(0, finishedAt - attempt.eventTimestamp) / 1000);
    } else {
      this.log.info({ deliveryId, webhookId: webhook.id, attemptNo, statusCode: result.statusCode, error: result.error, next: step.kind }, 'delivery attempt failed');
    }
  }

  /** Writes a fresh attempt's outcome; false when the row is not ours to record. */
  private async writeFresh(attempt: HeldAttempt, row: UnwrittenRow, outcome: AttemptRecord): Promise<boolean> {
    if (row.state === 'unwritten') {
      row.state = 'writing';
      const created = await this.store.writeFirst(this.newDelivery(attempt, row), outcome, row.event);
      if (created) this.metrics.fannedOut.inc();
      return created;
    }
    if (row.state === 'holding' && row.hold && !row.hold.write.flushing) {
      // the claim is not written yet: write the row in its final state instead
      row.hold.write.outcome = outcome;
      row.state = 'writing';
      const created = await row.hold.created;
      if (created) this.metrics.fannedOut.inc();
      return created;
    }
    if (row.state === 'holding') await row.hold?.created.catch(() => false);
    if (row.state !== 'held') return false;
    await this.store.record(outcome);
    return true;
  }

  private newDelivery(attempt: HeldAttempt, row: UnwrittenRow) {
    return { deliveryId: attempt.deliveryId, webhookId: attempt.webhook.id, eventId: attempt.eventId, organizationId: row.organizationId, eventType: row.eventType };
  }

  /**
   * Claims the rows of first attempts kept waiting longer than HOLD_AFTER_MS (a slow receiver, a long
   * queue): from then on they are ordinary leased attempts, their events can be marked fanned out
   * and acknowledged, and neither a takeover nor the reconciler redoes them while they wait.
   */
  holdSlowRows(): void {
    const before = this.clock() - HOLD_AFTER_MS;
    for (const attempt of this.held) {
      const row = attempt.row;
      if (!row || row.state !== 'unwritten' || (attempt.heldSince ?? 0) > before) continue;
      row.state = 'holding';
      const sentAt = this.clock();
      row.hold = this.store.hold(this.newDelivery(attempt, row), row.event);
      row.hold.created.then(
        (created) => {
          if (row.state !== 'holding') return;
          row.state = created ? 'held' : 'lost';
          if (created) {
            attempt.leaseUntil = sentAt + this.options.leaseMs;
            this.metrics.fannedOut.inc();
          }
        },
        (err) => {
          if (row.state === 'holding') row.state = 'lost';
          this.log.error({ err, deliveryId: attempt.deliveryId }, 'delivery row not claimed; its event is redone by a takeover');
        },
      );
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.options.concurrency) {
      this.active++;
      return Promise.resolve();
    }
    // the slot is handed over by release(), so `active` stays counted
    return new Promise((resolve) => this.slots.push(resolve));
  }

  private release(): void {
    const next = this.slots.shift();
    if (next) next();
    else if (--this.active === 0) {
      // the last POST of a burst: its outcome (and those before it) need not wait for a fuller batch
      setImmediate(() => this.active === 0 && this.store.flushSoon());
    }
  }

  private wakeWaiters(): void {
    if (this.roomWaiters.length) {
      const waiters = this.roomWaiters.splice(0);
      for (const check of waiters) check();
    }
    if (this.held.size === 0 && this.idleWaiters.length) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /**
   * Extends the leases of held attempts that could otherwise run out before their POST and its
   * record are done: whatever has less than a timeout plus half the margin left.
   */
  async renewLeases(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    const threshold = this.clock() + this.options.timeoutMs + (this.options.leaseMs - this.options.timeoutMs) / 2;
    const due = [...this.held].filter((a) => a.leaseUntil < threshold);
    if (due.length === 0) return;
    this.renewing = true;
    try {
      const sentAt = this.clock();
      const renewed = await this.store.renewLeases(due.map((a) => ({ deliveryId: a.deliveryId, attemptNo: a.attemptNo })));
      for (const a of due) if (renewed.has(a.deliveryId)) a.leaseUntil = sentAt + this.options.leaseMs;
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, 'lease renewal failed');
    } finally {
      this.renewing = false;
    }
  }
}
