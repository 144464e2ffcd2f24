import type { Logger } from 'pino';
import type { AttemptRecord, AttemptRef } from '@app/database';
import type { DispatcherMetrics } from '../metrics';
import type { AttemptResult, FairScheduler } from '../scheduling/fair-scheduler';
import type { WebhookHealth } from '../scheduling/webhook-health';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import type { Destinations } from './destinations';
import type { EventRows } from './event-rows';
import { FirstAttempt, FirstRowWriter } from './first-attempt';
import { isDelivered, nextStep } from './retry-schedule';
import type { PostResult } from './webhook-client';

/** A first attempt is kept unwritten at most this long; past it, its row is claimed (with a lease) before the outcome. */
export const HOLD_AFTER_MS = 1000;

/** The row a fresh fan-out's first attempt will write (nothing is written before its outcome, or its hold). */
export interface FreshRow {
  event: EventRows;
  organizationId: string;
  eventType: string;
}

/**
 * An attempt this dispatcher holds: its delivery row is `delivering` with attempts = attemptNo under
 * a lease, or (a fresh fan-out's first attempt, `fresh` set) not written yet.
 */
export interface HeldAttempt {
  deliveryId: string;
  attemptNo: number;
  /** attempts made before the current retry budget (a replay starts a fresh one) */
  attemptBase: number;
  webhook: WebhookTarget;
  eventId: string;
  /** the envelope's type and session: a sink's routing key or subject is made of them */
  eventType: string;
  sessionId: string | null;
  /** envelope timestamp, for the event-to-delivery latency */
  eventTimestamp: number;
  /** the envelope's bytes, shared by every webhook of the event; signed and sent as they are */
  body: Buffer;
  /** our clock's conservative view of the lease's end (taken before the statement that set it); Infinity while unwritten */
  leaseUntil: number;
  fresh?: FreshRow;
  /** made by a retry job (DeliveryWorker): handed back, the job itself is delayed; otherwise a job is added */
  viaJob?: boolean;
}

/** What the sender needs of the delivery record (the store's batched writer). */
export interface AttemptStore extends FirstRowWriter {
  record(outcome: AttemptRecord): Promise<void>;
  renewLeases(items: AttemptRef[]): Promise<Set<string>>;
  /** hands a claimed attempt back without a POST, due at `dueAt` (null: parked until re-enabled); false when no longer ours */
  postpone(deliveryId: string, attemptNo: number, dueAt: number | null): Promise<boolean>;
  /** no attempt is in flight: write what waits now */
  flushSoon(): void;
}

/** The delivery queue's side the sender uses: the job of a retry. */
export interface RetryJobs {
  add(deliveryId: string, attemptNo: number, delayMs?: number): Promise<void>;
}

/**
 * How long a breaker's probe may take before the breaker opens again: a receiver that hangs costs each probe this, not
 * the full request timeout, so one that answers again is found within about a probe and an open period.
 */
export const PROBE_TIMEOUT_MS = 2000;

/** How a held attempt ended: POSTed and recorded, handed back (due at `until`; null: parked), or not made. */
export type SendResult = { kind: 'sent' } | { kind: 'postponed'; until: number | null } | { kind: 'skipped' };

/** Where the sender takes its slots (the fair scheduler) and reports outcomes (the webhooks' health). */
export interface SenderScheduling {
  scheduler: Pick<FairScheduler, 'admit' | 'done' | 'inFlight' | 'start' | 'stop' | 'pump' | 'breakerOf' | 'lateSuccess'>;
  health: Pick<WebhookHealth, 'observe'>;
  /** the stored failing_since of a webhook (the directory's copy) */
  failingSince(webhookId: string): number | null;
}

export interface DeliverySenderOptions {
  timeoutMs: number;
  /** length of a lease from the statement that sets it (timeout + margin) */
  leaseMs: number;
  /** a breaker's probe without an answer this long counts as failed (default: PROBE_TIMEOUT_MS, at most timeoutMs) */
  probeTimeoutMs?: number;
}

/**
 * Makes held attempts: a POST starts when the fair scheduler gives it a slot (which it does only while
 * the delivery log can be written), signed over the event's shared body; outcomes go to the store's
 * batched writer, and a retry's delayed job is added only once its next_attempt_at is committed. An
 * attempt the scheduler turns away is handed back: its row `pending` again, due later, with a job.
 * Attempts kept waiting for a slot (a slow receiver) get their leases renewed, so the reconciler never
 * mistakes a queued attempt for an abandoned one.
 */
export class DeliverySender {
  /** each held attempt, with the owner of its row when it is a fresh first attempt */
  private readonly held = new Map<HeldAttempt, { since: number; first: FirstAttempt | null }>();
  private readonly roomWaiters: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing = false;
  /** held attempts whose POST has not ended (waiting for a slot or in flight), and POSTs ended (or not made) so far */
  private unsent = 0;
  private ended = 0;

  constructor(
    private readonly options: DeliverySenderOptions,
    private readonly store: AttemptStore,
    private readonly queue: RetryJobs,
    /** the delivery step of each kind of destination: a POST, an AMQP publish, a JetStream publish */
    private readonly destinations: Destinations,
    private readonly metrics: Pick<DispatcherMetrics, 'outcomes' | 'attemptSeconds' | 'eventToDeliverySeconds' | 'fannedOut'>,
    private readonly log: Logger,
    private readonly scheduling: SenderScheduling,
    private readonly clock: () => number = Date.now,
  ) {}

  start(): void {
    this.scheduling.scheduler.start();
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

  /** Attempts whose POST ended (or that were handed back or not made) so far: the pace the read-ahead is sized by. */
  get completed(): number {
    return this.ended;
  }

  /** Held attempts whose POST has not ended: waiting for a slot or in flight (not those being recorded). */
  get queued(): number {
    return this.unsent;
  }

  /**
   * Resolves when fewer than `limit` held attempts wait for a slot or are in flight: the fan-out reads ahead only that
   * far (attempts whose POST ended and that wait for their record do not count: their row is being written).
   */
  whenBelow(limit: number): Promise<void> {
    if (this.unsent < limit) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.unsent < limit) resolve();
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
    this.scheduling.scheduler.stop();
  }

  /**
   * Fan-out's attempts: fire and forget. A failure to record leaves the row `delivering` with its
   * lease, which the reconciler takes back once the lease ends; a fresh row that could not be written
   * leaves its event un-fanned-out and its stream entry pending, for a takeover.
   */
  sendAll(attempts: HeldAttempt[]): void {
    for (const attempt of attempts) {
      this.send(attempt).then(undefined, (err) =>
        this.log.error({ err, deliveryId: attempt.deliveryId, attemptNo: attempt.attemptNo }, 'delivery attempt not recorded; it is redone (lease expiry or takeover)'),
      );
    }
  }

  /** Makes one attempt and records it, or hands it back; rejects when the outcome could not be written. */
  async send(attempt: HeldAttempt): Promise<SendResult> {
    const first = attempt.fresh ? this.firstAttempt(attempt, attempt.fresh) : null;
    this.held.set(attempt, { since: this.clock(), first });
    this.unsent++;
    let unsent = true;
    const posted = () => {
      if (!unsent) return;
      unsent = false;
      this.unsent--;
      this.ended++;
      this.wakeWaiters();
    };
    const { scheduler } = this.scheduling;
    try {
      const admission = await this.admit(attempt, first);
      if (admission.kind === 'park') return await this.handBack(attempt, admission.until);
      // the attempt that just started past an open breaker is its probe (nothing else starts while it runs)
      const probe = scheduler.breakerOf(attempt.webhook.id)?.probing ?? false;
      let result: PostResult;
      let startedAt: number;
      let ended: AttemptResult = 'none';
      let released = false;
      const release = (r: AttemptResult) => {
        if (released) return;
        released = true;
        this.release(attempt.webhook.id, r);
        posted();
      };
      try {
        // its row belongs to someone else (or could not be claimed): that record decides
        if (first?.state.kind === 'lost') return { kind: 'skipped' };
        startedAt = this.clock();
        // the lease ran out while the log was down (renewal failed): another dispatcher may be on it
        if (attempt.leaseUntil <= startedAt) return { kind: 'skipped' };
        const post = this.deliver(attempt, startedAt);
        result = probe ? await this.probeOutcome(attempt.webhook.id, post, release) : await post;
        ended = isDelivered(result) ? 'success' : 'failure';
      } finally {
        release(ended);
      }
      this.scheduling.health.observe(attempt.webhook.id, this.scheduling.failingSince(attempt.webhook.id), ended === 'success', result.error);
      await this.finish(attempt, first, result, startedAt);
      return { kind: 'sent' };
    } finally {
      first?.giveUp();
      this.held.delete(attempt);
      posted();
      this.wakeWaiters();
    }
  }

  /** The fair scheduler's word on an attempt: go now, or park it until a time (a fresh row not written yet cannot be parked). */
  private admit(attempt: HeldAttempt, first: FirstAttempt | null) {
    return this.scheduling.scheduler.admit({
      webhookId: attempt.webhook.id,
      organizationId: attempt.webhook.organizationId,
      rateLimitPerSecond: attempt.webhook.rateLimitPerSecond,
      heldByJob: !!attempt.viaJob,
      // a fresh row not written yet cannot be handed back; it is claimed after HOLD_AFTER_MS
      parkable: () => !first || first.state.kind === 'held',
    });
  }

  /** The one step that differs per destination kind: the POST, the publish, the Chatwoot call. */
  private deliver(attempt: HeldAttempt, now: number): Promise<PostResult> {
    return this.destinations[attempt.webhook.kind].deliver(attempt.webhook, {
      eventId: attempt.eventId,
      eventType: attempt.eventType,
      organizationId: attempt.webhook.organizationId,
      sessionId: attempt.sessionId,
      body: attempt.body,
      now,
    });
  }

  /**
   * A probe's POST: without an answer within the probe timeout it counts as failed (the breaker opens again and the
   * slot is freed), and the POST goes on up to the full timeout; an answer that comes then still closes the breaker,
   * so a receiver that has become slow rather than dead is not kept out for ever by short probes.
   */
  private async probeOutcome(webhookId: string, post: Promise<PostResult>, release: (r: AttemptResult) => void): Promise<PostResult> {
    const probeMs = Math.min(this.options.timeoutMs, this.options.probeTimeoutMs ?? PROBE_TIMEOUT_MS);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), probeMs)));
    const first = await Promise.race([post, late]);
    clearTimeout(timer);
    if (first) return first;
    release('failure');
    const result = await post;
    if (isDelivered(result)) this.scheduling.scheduler.lateSuccess(webhookId);
    return result;
  }

  /**
   * The scheduler turned the attempt away (its webhook's breaker is open, its share stayed busy, it was disabled):
   * its row goes back to `pending` with the attempt's number unused, due at `until`; an attempt made without a job
   * (fan-out) gets the job of that attempt (a retry job's holder moves its own job). Nothing is counted against the
   * retry budget.
   */
  private async handBack(attempt: HeldAttempt, until: number | null): Promise<SendResult> {
    if (!(await this.store.postpone(attempt.deliveryId, attempt.attemptNo, until))) return { kind: 'skipped' };
    if (!attempt.viaJob && until !== null) await this.queue.add(attempt.deliveryId, attempt.attemptNo, Math.max(0, until - this.clock()));
    this.metrics.outcomes.inc({ outcome: until === null ? 'parked' : 'postponed' });
    return { kind: 'postponed', until };
  }

  private async finish(attempt: HeldAttempt, first: FirstAttempt | null, result: PostResult, startedAt: number): Promise<void> {
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
    const written = first ? await first.complete(outcome) : 'held';
    // lost: a duplicate POST of someone else's delivery; the receiver dedupes it by request id
    if (written === 'lost') return;
    if (written === 'held') await this.store.record(outcome);
    if (step.kind === 'retry') {
      // next_attempt_at is committed: if this add is lost, the reconciler enqueues the due delivery
      await this.queue.add(deliveryId, attemptNo + 1, step.delayMs);
    }
    this.metrics.attemptSeconds.observe({ outcome: step.kind === 'delivered' ? 'success' : 'failure' }, result.durationMs / 1000);
    if (result.refused) this.metrics.outcomes.inc({ outcome: 'refused' });
    this.metrics.outcomes.inc({ outcome: step.kind });
    if (step.kind === 'delivered') {
      this.metrics.eventToDeliverySeconds.observe(Math.max(0, finishedAt - attempt.eventTimestamp) / 1000);
    } else {
      this.log.info({ deliveryId, webhookId: webhook.id, attemptNo, statusCode: result.statusCode, error: result.error, next: step.kind }, 'delivery attempt failed');
    }
  }

  private firstAttempt(attempt: HeldAttempt, fresh: FreshRow): FirstAttempt {
    return new FirstAttempt(
      { deliveryId: attempt.deliveryId, webhookId: attempt.webhook.id, eventId: attempt.eventId, organizationId: fresh.organizationId, eventType: fresh.eventType },
      fresh.event,
      this.store,
      () => this.metrics.fannedOut.inc(),
    );
  }

  /**
   * Claims the rows of first attempts kept waiting longer than HOLD_AFTER_MS (a slow receiver, a long
   * queue): from then on they are ordinary leased attempts, their events can be marked fanned out
   * and acknowledged, and neither a takeover nor the reconciler redoes them while they wait.
   */
  holdSlowRows(): void {
    const before = this.clock() - HOLD_AFTER_MS;
    for (const [attempt, { since, first }] of this.held) {
      if (!first || first.state.kind !== 'unwritten' || since > before) continue;
      const sentAt = this.clock();
      first.hold().then(
        (held) => {
          if (held) attempt.leaseUntil = sentAt + this.options.leaseMs;
        },
        (err) => this.log.error({ err, deliveryId: attempt.deliveryId }, 'delivery row not claimed; its event is redone by a takeover'),
      );
    }
  }

  private release(webhookId: string, result: AttemptResult): void {
    this.scheduling.scheduler.done(webhookId, result);
    if (this.scheduling.scheduler.inFlight === 0) {
      // the last POST of a burst: its outcome (and those before it) need not wait for a fuller batch
      setImmediate(() => this.scheduling.scheduler.inFlight === 0 && this.store.flushSoon());
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
    const due = [...this.held.keys()].filter((a) => a.leaseUntil < threshold);
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
