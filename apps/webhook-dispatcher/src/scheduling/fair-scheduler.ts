/**
 * The fair scheduler: which held attempt gets the next of this dispatcher's POST slots. It owns the order of due
 * work (round robin over organizations, then over each organization's webhooks, first come first served within a
 * webhook), each webhook's share of the slots, its circuit breaker and optional rate limit, and the decision to hand
 * an attempt back (park it) rather than keep it waiting in memory. It does no I/O: the sender makes the POSTs and
 * writes the hand-backs; the delivery log's health (LogHealth) says whether any attempt may start at all.
 *
 * Fairness across replicas follows from each replica being fair: the stream's entries and the retry jobs are
 * shared among the dispatchers, and every one of them serves organizations and webhooks in turn; a webhook's share
 * (`perWebhook`) and rate limit hold per replica.
 */
import { BreakerSettings, BreakerState, WebhookBreaker } from './webhook-breaker';

/**
 * An attempt kept waiting this long while its webhook holds its whole share is handed back (due again a little
 * later): a receiver that hangs then costs memory and worker slots for its share only, never for its backlog.
 */
export const PARK_AFTER_MS = 1000;

/**
 * While a webhook's breaker is open, at most this many of its handed-back attempts per cooldown come back for the next
 * probe (one of them is the probe, the others stand in if it is taken elsewhere); the rest wait `openParkMs`.
 */
export const PROBE_SPARES = 4;

/**
 * How long an attempt handed back by an open breaker beyond its probe spares waits: unless its breaker closes first
 * (a probe or any attempt succeeded), which brings it back at once (`SchedulerSignals.breakerClosed`). This is also
 * the latest it comes back when that release is missed (the replica that parked it died, or its release raced it).
 */
export const OPEN_PARK_MS = 30_000;

/** What the scheduler knows of an attempt asking for a slot. */
export interface Ticket {
  webhookId: string;
  organizationId: string;
  /** the webhook's rateLimitPerSecond (null: none) */
  rateLimitPerSecond: number | null;
  /** a retry job's worker waits with the attempt (a slot of the delivery queue's worker is held) */
  heldByJob: boolean;
}

/** go: POST now (then call `done`); park: hand the attempt back, due at `until` (null: until the webhook is re-enabled). */
export type Admission = { kind: 'go' } | { kind: 'park'; until: number | null };

export type AttemptResult = 'success' | 'failure' | 'none';

export interface SchedulerOptions {
  /** POST slots of this dispatcher */
  concurrency: number;
  /** slots one webhook may hold */
  perWebhook: number;
  /**
   * an attempt kept waiting this long is handed back when its webhook is stuck (its whole share busy and none of
   * it done for this long), over its rate limit, or when a retry job's worker waits with it at a full share
   */
  parkAfterMs: number;
  breaker: BreakerSettings;
  /** how long an open breaker's attempts beyond its probe spares wait (default OPEN_PARK_MS) */
  openParkMs?: number;
  /** attempts per cooldown an open breaker sends back for its next probe (default PROBE_SPARES) */
  probeSpares?: number;
}

export interface SchedulerSignals {
  /** the delivery log can be written: no attempt starts while it cannot (and none is handed back) */
  writable(): boolean;
  /** the webhook was disabled: its waiting attempts are parked */
  disabled(webhookId: string): boolean;
  /**
   * the webhook's breaker closed after it sent attempts away for `openParkMs`: their deliveries are to run now (the
   * scheduler does no I/O; the dispatcher makes the rows due and promotes their jobs)
   */
  breakerClosed?(webhookId: string): void;
}

interface Waiter {
  ticket: Ticket;
  since: number;
  resolve: (admission: Admission) => void;
}

/** One webhook's queue, share and breaker. */
class Lane {
  active = 0;
  readonly waiting: Waiter[] = [];
  /** the last time a POST of it ended, or it reached its full share: a full share with no progress since is stuck */
  progressAt = 0;
  /** when it was last served (the scheduler's sequence): the least recently served goes first */
  servedAt = 0;
  rate: number | null = null;
  /** while its breaker is open: the start of the current cooldown and the hand-backs sent back for a probe in it */
  sparesSince = -Infinity;
  spares = 0;
  /** attempts were sent away for the open park since its breaker last closed: release them when it closes */
  parkedOpen = false;
  private tokens = 0;
  private refilledAt = 0;

  constructor(
    readonly webhookId: string,
    readonly organizationId: string,
    readonly breaker: WebhookBreaker,
  ) {}

  setRate(rate: number | null, now: number): void {
    if (rate === this.rate) return;
    this.rate = rate;
    this.tokens = rate ? Math.min(1, rate) : 0;
    this.refilledAt = now;
  }

  /** ms until a token is available (0: now) */
  tokenWait(now: number): number {
    if (!this.rate) return 0;
    this.tokens = Math.min(Math.max(1, this.rate), this.tokens + ((now - this.refilledAt) * this.rate) / 1000);
    this.refilledAt = now;
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.rate);
  }

  takeToken(): void {
    if (this.rate) this.tokens -= 1;
  }
}

/** An organization's lanes that have attempts waiting. */
class OrgTurn {
  readonly lanes: Lane[] = [];
  constructor(readonly organizationId: string) {}
}

export class FairScheduler {
  private active = 0;
  private readonly lanes = new Map<string, Lane>();
  /** organizations with waiting attempts, served in turn */
  private readonly ring: OrgTurn[] = [];
  private readonly turns = new Map<string, OrgTurn>();
  /** when each organization was last served; kept while it has a lane */
  private readonly orgServedAt = new Map<string, number>();
  /** attempts of each organization waiting or in flight here */
  private readonly orgHeld = new Map<string, number>();
  private sequence = 0;
  private wakeAt = Infinity;
  private wakeTimer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly signals: SchedulerSignals,
    private readonly clock: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** Looks for attempts to hand back every `everyMs` (a webhook whose breaker opened, that hangs, or was disabled). */
  start(everyMs = 250): void {
    this.sweepTimer = setInterval(() => this.sweep(), everyMs);
    this.sweepTimer.unref();
  }

  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.sweepTimer = this.wakeTimer = null;
  }

  /** POSTs in flight */
  get inFlight(): number {
    return this.active;
  }

  /** Attempts waiting for a slot. */
  get waiting(): number {
    let n = 0;
    for (const turn of this.ring) for (const lane of turn.lanes) n += lane.waiting.length;
    return n;
  }

  /** Attempts of an organization waiting for a slot or POSTing: what the stream consumer reads ahead for it. */
  heldOf(organizationId: string): number {
    return this.orgHeld.get(organizationId) ?? 0;
  }

  /**
   * An organization whose attempts are not moving here: each of its webhooks with attempts here hangs (its whole share
   * busy, no POST ended for `parkAfterMs`), is held back by its breaker, or was disabled. The consumer reads past its
   * events. One healthy webhook keeps it moving (its hung webhook's attempts are handed back as before).
   */
  stalled(organizationId: string): boolean {
    const now = this.clock();
    let any = false;
    for (const lane of this.lanes.values()) {
      if (lane.organizationId !== organizationId) continue;
      const stuck = lane.active >= this.options.perWebhook && now - lane.progressAt >= this.options.parkAfterMs;
      if (!stuck && !this.blocked(lane, now) && !this.signals.disabled(lane.webhookId)) return false;
      any = true;
    }
    return any;
  }

  private countHeld(organizationId: string, delta: number): void {
    const n = (this.orgHeld.get(organizationId) ?? 0) + delta;
    if (n > 0) this.orgHeld.set(organizationId, n);
    else this.orgHeld.delete(organizationId);
  }

  /** The webhook was re-enabled after being disabled: its breaker starts closed, whatever it had counted. */
  reset(webhookId: string): void {
    const lane = this.lanes.get(webhookId);
    if (lane) this.closeBreaker(lane);
    this.pump();
  }

  /**
   * A probe's POST answered 2xx after its probe timeout (the breaker had opened again meanwhile): the webhook is back,
   * its breaker closes and what it sent away runs now.
   */
  lateSuccess(webhookId: string): void {
    const lane = this.lanes.get(webhookId);
    if (lane) this.closeBreaker(lane);
    this.pump();
  }

  breakerOf(webhookId: string): WebhookBreaker | undefined {
    return this.lanes.get(webhookId)?.breaker;
  }

  /** Resolves when the attempt may POST (`go`), or is to be handed back (`park`). */
  admit(ticket: Ticket): Promise<Admission> {
    const lane = this.lane(ticket);
    lane.setRate(ticket.rateLimitPerSecond, this.clock());
    return new Promise((resolve) => {
      const now = this.clock();
      // its breaker is open or it was disabled: it goes back at once rather than at the next sweep
      if (this.signals.writable()) {
        if (this.signals.disabled(lane.webhookId)) return resolve({ kind: 'park', until: null });
        if (this.blocked(lane, now)) return resolve({ kind: 'park', until: this.openComeBack(lane, now) });
      }
      lane.waiting.push({ ticket, since: now, resolve });
      this.countHeld(lane.organizationId, 1);
      if (lane.waiting.length === 1) this.enterRing(lane);
      this.pump();
    });
  }

  /** The POST of an admitted attempt ended (`none`: it was not made); its result feeds the webhook's breaker. */
  done(webhookId: string, result: AttemptResult): void {
    const lane = this.lanes.get(webhookId);
    if (!lane) return;
    lane.active--;
    this.active--;
    this.countHeld(lane.organizationId, -1);
    lane.progressAt = this.clock();
    if (result === 'success') this.closeBreaker(lane);
    else if (result === 'failure') {
      const before: BreakerState = lane.breaker.state;
      lane.breaker.failed(this.clock());
      const after: BreakerState = lane.breaker.state;
      // the breaker just opened: what waits behind it goes back at once, not at the next sweep
      if (before.kind === 'closed' && after.kind === 'open') this.sweepLane(lane, this.clock());
    }
    if (lane.active === 0 && lane.waiting.length === 0 && lane.breaker.state.kind === 'closed' && lane.breaker.state.failures === 0) {
      this.lanes.delete(webhookId);
      if (![...this.lanes.values()].some((l) => l.organizationId === lane.organizationId)) this.orgServedAt.delete(lane.organizationId);
    }
    this.pump();
  }

  /** Starts what may start; call when the log becomes writable again. */
  pump(): void {
    if (!this.signals.writable()) return;
    const now = this.clock();
    while (this.active < this.options.concurrency) {
      const lane = this.nextLane(now);
      if (!lane) break;
      const waiter = lane.waiting.shift()!;
      if (lane.waiting.length === 0) this.leaveRing(lane);
      lane.active++;
      this.active++;
      if (lane.active === this.options.perWebhook) lane.progressAt = now;
      lane.breaker.started();
      lane.takeToken();
      waiter.resolve({ kind: 'go' });
    }
    this.armWake(now);
  }

  /** Hands back what should not keep waiting: attempts of disabled webhooks, of open breakers, of saturated webhooks. */
  sweep(): void {
    if (!this.signals.writable()) return;
    const now = this.clock();
    for (const turn of [...this.ring]) for (const lane of [...turn.lanes]) this.sweepLane(lane, now);
  }

  private sweepLane(lane: Lane, now: number): void {
    if (!this.signals.writable()) return;
    const disabled = this.signals.disabled(lane.webhookId);
    const blocked = this.blocked(lane, now);
    const full = lane.active >= this.options.perWebhook;
    // a receiver that hangs: its whole share busy, nothing done for a while. One that is merely busy (a backlog at a
    // receiver that answers) keeps its queue; only the retry jobs' workers waiting in it are let go
    const stuck = full && now - lane.progressAt >= this.options.parkAfterMs;
    const overRate = !full && lane.tokenWait(now) > 0;
    if (!disabled && !blocked && !full && !overRate) return;
    for (const waiter of [...lane.waiting]) {
      let until: number | null;
      if (disabled) until = null;
      else if (blocked) until = this.openComeBack(lane, now);
      else if (now - waiter.since >= this.options.parkAfterMs && (stuck || overRate || waiter.ticket.heldByJob)) {
        until = now + Math.round(this.options.parkAfterMs * (1 + this.random()));
      } else continue;
      lane.waiting.splice(lane.waiting.indexOf(waiter), 1);
      this.countHeld(lane.organizationId, -1);
      waiter.resolve({ kind: 'park', until });
    }
    if (lane.waiting.length === 0) this.leaveRing(lane);
  }

  /**
   * When an attempt turned away by the lane's open breaker comes back. The first `probeSpares` of each cooldown come
   * for the next probe (after the open period, spread over a cooldown); the rest wait `openParkMs` (spread over half of
   * it), or less: until the breaker closes, which releases them (`breakerClosed`). So a destination that is down costs
   * a few attempts per cooldown, not its whole backlog cycling through the queue, a claim and a hand-back each, every
   * cooldown (issue 41: a webhook slowed while its organization's brokers were down).
   */
  private openComeBack(lane: Lane, now: number): number {
    const { cooldownMs } = this.options.breaker;
    if (now - lane.sparesSince >= cooldownMs) {
      lane.sparesSince = now;
      lane.spares = 0;
    }
    const forProbe = lane.breaker.comeBackAt(now, this.random());
    if (lane.spares < (this.options.probeSpares ?? PROBE_SPARES)) {
      lane.spares++;
      return forProbe;
    }
    lane.parkedOpen = true;
    const parkMs = this.options.openParkMs ?? OPEN_PARK_MS;
    return Math.max(forProbe, Math.round(now + parkMs + (this.random() * parkMs) / 2));
  }

  /** Any attempt succeeded: the breaker closes, and the attempts its open period sent away are released. */
  private closeBreaker(lane: Lane): void {
    lane.breaker.succeeded();
    lane.sparesSince = -Infinity;
    if (!lane.parkedOpen) return;
    lane.parkedOpen = false;
    this.signals.breakerClosed?.(lane.webhookId);
  }

  /** Its breaker holds the lane back: open, or its probe in flight. */
  private blocked(lane: Lane, now: number): boolean {
    const s = lane.breaker.state;
    return s.kind === 'probing' || (s.kind === 'open' && now < s.until);
  }

  private lane(ticket: Ticket): Lane {
    let lane = this.lanes.get(ticket.webhookId);
    if (!lane) {
      lane = new Lane(ticket.webhookId, ticket.organizationId, new WebhookBreaker(this.options.breaker));
      this.lanes.set(ticket.webhookId, lane);
    }
    return lane;
  }

  private startable(lane: Lane, now: number): boolean {
    return (
      lane.active < this.options.perWebhook && lane.breaker.canStart(now) && !this.signals.disabled(lane.webhookId) && lane.tokenWait(now) === 0
    );
  }

  /**
   * The next lane to serve: of the organizations with a lane that may start, the one served least recently; of its
   * lanes, the one served least recently. An organization with a backlog therefore takes turns with one that just
   * got its first attempt, however long its backlog, and so do the webhooks of one organization.
   */
  private nextLane(now: number): Lane | null {
    let best: Lane | null = null;
    let bestOrgAt = Infinity;
    for (const turn of this.ring) {
      const orgAt = this.orgServedAt.get(turn.organizationId) ?? 0;
      if (orgAt >= bestOrgAt) continue;
      let pick: Lane | null = null;
      for (const lane of turn.lanes) if (this.startable(lane, now) && (!pick || lane.servedAt < pick.servedAt)) pick = lane;
      if (pick) {
        best = pick;
        bestOrgAt = orgAt;
      }
    }
    if (best) {
      best.servedAt = ++this.sequence;
      this.orgServedAt.set(best.organizationId, this.sequence);
    }
    return best;
  }

  private enterRing(lane: Lane): void {
    let turn = this.turns.get(lane.organizationId);
    if (!turn) {
      turn = new OrgTurn(lane.organizationId);
      this.turns.set(lane.organizationId, turn);
      this.ring.push(turn);
    }
    turn.lanes.push(lane);
  }

  private leaveRing(lane: Lane): void {
    const turn = this.turns.get(lane.organizationId);
    if (!turn) return;
    const li = turn.lanes.indexOf(lane);
    if (li < 0) return;
    turn.lanes.splice(li, 1);
    if (turn.lanes.length) return;
    this.ring.splice(this.ring.indexOf(turn), 1);
    this.turns.delete(lane.organizationId);
  }

  /** Lanes held back by a breaker's open period or a rate limit: pump again when the first of them may start. */
  private armWake(now: number): void {
    let at = Infinity;
    if (this.active < this.options.concurrency) {
      for (const turn of this.ring) {
        for (const lane of turn.lanes) {
          if (lane.active >= this.options.perWebhook) continue;
          const s = lane.breaker.state;
          if (s.kind === 'open' && now < s.until) at = Math.min(at, s.until);
          else if (s.kind === 'closed') {
            const wait = lane.tokenWait(now);
            if (wait > 0) at = Math.min(at, now + wait);
          }
        }
      }
    }
    if (at === Infinity || at >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.pump();
    }, Math.max(1, at - now));
    this.wakeTimer.unref?.();
  }
}
