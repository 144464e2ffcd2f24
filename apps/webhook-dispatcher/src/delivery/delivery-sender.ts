import type { Logger } from 'pino';
import type { AttemptRecord, AttemptRef } from '@app/database';
import type { DispatcherMetrics } from '../metrics';
import type { AttemptResult, FairScheduler } from '../scheduling/fair-scheduler';
import type { WebhookHealth } from '../scheduling/webhook-health';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import type { DeliveryMessage, Destination, Destinations } from './destinations';
import { isDelivered, nextStep } from './retry-schedule';
import type { PostResult } from './webhook-client';

/**
 * An attempt this dispatcher holds: its delivery row is `delivering` with attempts = attemptNo under a lease, or (a
 * fan-out's first attempt, `inserted` set) is being inserted so; no call is made before that row is committed.
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
  /** our clock's conservative view of the lease's end (taken before the statement that set it) */
  leaseUntil: number;
  /**
   * A fan-out's insert of this attempt's row, claimed: true once committed as this attempt's own; false when the
   * (webhook, event) pair had a row already (a takeover redid the event: that row's holder makes the call).
   */
  inserted?: Promise<boolean>;
  /** made by a retry job (DeliveryWorker): handed back, the job itself is delayed; otherwise a job is added */
  viaJob?: boolean;
}

/** What the sender needs of the delivery record (the store's batched writer). */
export interface AttemptStore {
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

/** The call `prepare` readies: the destination of the webhook's kind and the message but for its instant. */
interface Call {
  destination: Destination;
  target: WebhookTarget;
  message: Omit<DeliveryMessage, 'now'>;
}

/** No call is made: the row is someone else's (its pair had one already), or the lease ran out before the call. */
type NotMade = { kind: 'not-made' };

/** `prepare`'s outcome: the call to make, or none. */
type Prepared = { kind: 'ready'; call: Call } | NotMade;

/** `admit`'s outcome, the fair scheduler's word; `probe`: the attempt that starts past an open breaker is its probe. */
type Admitted = { kind: 'go'; probe: boolean } | { kind: 'park'; until: number | null };

/**
 * `post`'s outcome, what `record` writes: the destination's answer (`delivered`: it took the message) and when the
 * call started, a park, or no call.
 */
type Posted = { kind: 'posted'; result: PostResult; delivered: boolean; startedAt: number } | Extract<Admitted, { kind: 'park' }> | NotMade;

/**
 * Makes held attempts, each in four steps taken once and in order: `prepare` (its row is this attempt's: a fan-out's
 * insert committed; the call readied), `admit` (the fair scheduler gives it a slot, which it does only while the
 * delivery log can be written, or turns it away), `post` (the destination's call, a breaker's probe timed inside it;
 * the slot is freed there, once), `record` (the outcome's row, a retry's job once its next_attempt_at is committed,
 * metrics, the webhook's health; or the hand-back of an attempt turned away: its row `pending` again, due later).
 * Attempts kept waiting for a slot (a slow receiver) get their leases renewed, so the reconciler never mistakes a
 * queued attempt for an abandoned one.
 */
export class DeliverySender {
  /** each held attempt, and whether its call has not ended yet (waiting for its row, a slot, or in flight) */
  private readonly held = new Map<HeldAttempt, { unsent: boolean }>();
  private readonly roomWaiters: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing = false;
  /** held attempts whose call has not ended, and calls ended (or not made) so far */
  private unsent = 0;
  private ended = 0;

  constructor(
    private readonly options: DeliverySenderOptions,
    private readonly store: AttemptStore,
    private readonly queue: RetryJobs,
    /** the delivery step of each kind of destination: a POST, an AMQP publish, a JetStream publish */
    private readonly destinations: Destinations,
    private readonly metrics: Pick<DispatcherMetrics, 'outcomes' | 'attemptSeconds' | 'eventToDeliverySeconds'>,
    private readonly log: Logger,
    private readonly scheduling: SenderScheduling,
    private readonly clock: () => number = Date.now,
  ) {}

  start(): void {
    this.scheduling.scheduler.start();
    const every = Math.max(100, Math.min(1000, Math.floor((this.options.leaseMs - this.options.timeoutMs) / 4)));
    this.renewTimer = setInterval(() => void this.renewLeases(), every);
    this.renewTimer.unref();
  }

  /** Attempts held and not yet recorded (waiting for their row or a slot, calling, or being written). */
  get backlog(): number {
    return this.held.size;
  }

  /** Attempts whose call ended (or that were handed back or not made) so far: the pace the read-ahead is sized by. */
  get completed(): number {
    return this.ended;
  }

  /** Held attempts whose call has not ended: waiting for their row or a slot, or in flight (not those being recorded). */
  get queued(): number {
    return this.unsent;
  }

  /**
   * Resolves when fewer than `limit` held attempts wait for their row or a slot or are in flight: the fan-out reads
   * ahead only that far (attempts whose call ended and that wait for their record do not count).
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
   * Fan-out's attempts: fire and forget. A failure to record leaves the row `delivering` with its lease, which the
   * reconciler takes back once the lease ends; a fan-out's row that could not be inserted leaves its event
   * un-fanned-out and its stream entry pending, for a takeover.
   */
  sendAll(attempts: HeldAttempt[]): void {
    for (const attempt of attempts) {
      this.send(attempt).then(undefined, (err) =>
        this.log.error({ err, deliveryId: attempt.deliveryId, attemptNo: attempt.attemptNo }, 'delivery attempt not made or not recorded; it is redone (lease expiry or takeover)'),
      );
    }
  }

  /** Makes one attempt and records it, or hands it back: prepare → admit → post → record; rejects when it could not be written. */
  async send(attempt: HeldAttempt): Promise<SendResult> {
    this.enter(attempt);
    try {
      const prepared = await this.prepare(attempt);
      if (prepared.kind === 'not-made') return await this.record(attempt, prepared);
      const admitted = await this.admit(attempt);
      const posted = admitted.kind === 'go' ? await this.post(attempt, prepared.call, admitted.probe) : admitted;
      return await this.record(attempt, posted);
    } finally {
      this.leave(attempt);
    }
  }

  /** Its row is this attempt's (a fan-out's insert committed, or a job's claim), and the call is readied. */
  private async prepare(attempt: HeldAttempt): Promise<Prepared> {
    // the pair had a row already (a takeover redid the event): that row's holder makes the call
    if (attempt.inserted && !(await attempt.inserted)) return { kind: 'not-made' };
    const { webhook } = attempt;
    const message = { eventId: attempt.eventId, eventType: attempt.eventType, organizationId: webhook.organizationId, sessionId: attempt.sessionId, body: attempt.body };
    return { kind: 'ready', call: { destination: this.destinations[webhook.kind], target: webhook, message } };
  }

  /** The fair scheduler's word on an attempt: go now (a probe, past an open breaker), or park it until a time. */
  private async admit(attempt: HeldAttempt): Promise<Admitted> {
    const { scheduler } = this.scheduling;
    const { webhook } = attempt;
    const admission = await scheduler.admit({
      webhookId: webhook.id,
      organizationId: webhook.organizationId,
      rateLimitPerSecond: webhook.rateLimitPerSecond,
      heldByJob: !!attempt.viaJob,
    });
    // the attempt that just started past an open breaker is its probe (nothing else starts while it runs)
    return admission.kind === 'park' ? admission : { kind: 'go', probe: scheduler.breakerOf(webhook.id)?.probing ?? false };
  }

  /**
   * The destination's call, with the slot the scheduler gave: freed once, when the answer came (or a probe's time ran
   * out), or with no result when no call was made. The lease is checked at the call's start, after any wait for the
   * slot: it ran out while the log was down (renewal failed), and another dispatcher may be on the row.
   */
  private async post(attempt: HeldAttempt, call: Call, probe: boolean): Promise<Posted> {
    let released = false;
    const release = (result: AttemptResult) => {
      if (released) return;
      released = true;
      this.release(attempt, result);
    };
    try {
      const startedAt = this.clock();
      if (attempt.leaseUntil <= startedAt) return { kind: 'not-made' };
      const answer = call.destination.deliver(call.target, { ...call.message, now: startedAt });
      const result = await (probe ? this.probeAnswer(answer, () => release('failure')) : answer);
      const delivered = isDelivered(result);
      // a probe counted failed at its timeout whose answer came after all: the receiver is slow, not dead
      if (released && delivered) this.scheduling.scheduler.lateSuccess(attempt.webhook.id);
      release(delivered ? 'success' : 'failure');
      return { kind: 'posted', result, delivered, startedAt };
    } finally {
      release('none');
    }
  }

  /**
   * A probe's answer: without one within the probe timeout the probe counts as failed (`timedOut`: the breaker opens
   * again and the slot is freed), and the call goes on up to the full timeout; an answer that comes then still closes
   * the breaker, so a receiver that has become slow rather than dead is not kept out for ever by short probes.
   */
  private async probeAnswer(answer: Promise<PostResult>, timedOut: () => void): Promise<PostResult> {
    const probeMs = Math.min(this.options.timeoutMs, this.options.probeTimeoutMs ?? PROBE_TIMEOUT_MS);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), probeMs)));
    const first = await Promise.race([answer, late]);
    clearTimeout(timer);
    if (first) return first;
    timedOut();
    return answer;
  }

  /** Writes what the attempt came to: its outcome, its hand-back, or nothing when no call was made. */
  private async record(attempt: HeldAttempt, posted: Posted): Promise<SendResult> {
    if (posted.kind === 'not-made') return { kind: 'skipped' };
    if (posted.kind === 'park') return this.handBack(attempt, posted.until);
    await this.recordOutcome(attempt, posted);
    return { kind: 'sent' };
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

  /** The outcome's row, then the retry's job (its next_attempt_at committed), the metrics and the webhook's health. */
  private async recordOutcome(attempt: HeldAttempt, { result, delivered, startedAt }: Extract<Posted, { kind: 'posted' }>): Promise<void> {
    const { deliveryId, attemptNo, webhook } = attempt;
    this.scheduling.health.observe(webhook.id, this.scheduling.failingSince(webhook.id), delivered, result.error);
    const finishedAt = this.clock();
    const step = nextStep(webhook.retryPolicy, attemptNo - attempt.attemptBase, result, finishedAt);
    await this.store.record({
      deliveryId,
      attemptNo,
      status: step.kind === 'retry' ? 'pending' : step.kind,
      statusCode: result.statusCode,
      error: result.error,
      snippet: result.snippet,
      durationMs: result.durationMs,
      startedAt,
      nextAttemptAt: step.kind === 'retry' ? finishedAt + step.delayMs : null,
    });
    // next_attempt_at is committed: if this add is lost, the reconciler enqueues the due delivery
    if (step.kind === 'retry') await this.queue.add(deliveryId, attemptNo + 1, step.delayMs);
    this.metrics.attemptSeconds.observe({ outcome: step.kind === 'delivered' ? 'success' : 'failure' }, result.durationMs / 1000);
    if (result.refused) this.metrics.outcomes.inc({ outcome: 'refused' });
    this.metrics.outcomes.inc({ outcome: step.kind });
    if (step.kind === 'delivered') {
      this.metrics.eventToDeliverySeconds.observe(Math.max(0, finishedAt - attempt.eventTimestamp) / 1000);
    } else {
      this.log.info({ deliveryId, webhookId: webhook.id, attemptNo, statusCode: result.statusCode, error: result.error, next: step.kind }, 'delivery attempt failed');
    }
  }

  /** The attempt is held from now on: counted among those whose call has not ended, its lease renewed. */
  private enter(attempt: HeldAttempt): void {
    this.held.set(attempt, { unsent: true });
    this.unsent++;
  }

  /** The attempt's call ended (or will not be made): it no longer counts against the read-ahead. */
  private callEnded(attempt: HeldAttempt): void {
    const entry = this.held.get(attempt);
    if (!entry?.unsent) return;
    entry.unsent = false;
    this.unsent--;
    this.ended++;
    this.wakeWaiters();
  }

  /** The attempt is recorded, handed back or given up: no longer held. */
  private leave(attempt: HeldAttempt): void {
    this.callEnded(attempt);
    this.held.delete(attempt);
    this.wakeWaiters();
  }

  /** Frees the attempt's slot (its result feeds the breaker); the last call of a burst writes what waits at once. */
  private release(attempt: HeldAttempt, result: AttemptResult): void {
    this.callEnded(attempt);
    this.scheduling.scheduler.done(attempt.webhook.id, result);
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
