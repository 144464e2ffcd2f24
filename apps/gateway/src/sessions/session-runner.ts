import type { Logger } from 'pino';
import { CatalogEvent, DomainError, GroupView, SyncHistoryMode, SessionActionArgs, SessionActionName, SessionActionResult, SessionStatus } from '@app/contracts';
import { CredentialsUnusableError } from '../engine/credentials-unusable';
import type { AuthStateStore, EngineConnection, EngineEvent, EngineLookups, FollowedChannelBook, SessionEngine } from '../engine/engine.interface';
import { InboundEngineEvent, isInboundEvent } from '../messages/inbound-events';
import type { OutboundSender } from '../messages/outbound-sender';
import type { ChatEvents } from '../messages/chat-events';
import { AuthStateFactory, QrBoard, realTimers, RunnerSettings, SessionLeases, Timers } from './session-ports';
import type { SessionRecord, SessionRecordPatch } from '../store-ports';
import { HistoryQueue } from './history-queue';
import { InboundIntake } from './inbound-intake';
import { unlinkOffline } from './offline-unlink';
import { EventNotTakenError, SessionFencedError } from './session-errors';
import { SessionGroups } from './session-groups';
import { SessionRow } from './session-row';
import { buildSessionHandlers, SessionHandlerDeps } from './session-handlers';
import { initialState, SessionEffect, SessionInput, SessionState, transition } from './session-state';

export interface SessionRunnerDeps extends SessionHandlerDeps {
  engine: SessionEngine;
  authState: AuthStateFactory;
  leases: SessionLeases;
  qr: QrBoard;
  settings: RunnerSettings;
  logger: Logger;
  clock?: () => number;
  timers?: Timers;
  /** [0, 1): spreads reconnect delays (jitter); Math.random unless a test fixes it */
  random?: () => number;
  /**
   * WhatsApp refused this client's WhatsApp Web version (405). The gateway says once, in a log line and a metric, that
   * the operator must update WHATSAPP_WEB_VERSION or allow the version fetch (ClientVersionAlarm).
   */
  clientVersionRefused?: (sessionId: string) => void;
  /**
   * False while this gateway's lease renewals have lapsed (LeaseWatchdog): its leases may have expired, so nothing may
   * open a socket or act on a socket's event until the watchdog has closed everything. Checked synchronously, so it
   * holds even for the first callback that runs after the process was paused.
   */
  leasesTrusted?: () => boolean;
}

/** Row statuses that wait on the owner: the table places such a session here, but no gateway starts it by itself. */
const NOT_RESUMED: readonly SessionStatus[] = ['stopped', 'failed', 'logged_out'];

/** An engine event the runner takes in its serial queue (a history batch has a queue of its own), with its own shape. */
type EngineEventOf = { [E in EngineEvent as E['type']]: E };
type QueuedEngineEventType = Exclude<EngineEvent['type'], 'history'>;
/** One handler per engine event type: a new type fails to compile until the runner says what it does with it. */
type EngineEventTable = { [T in QueuedEngineEventType]: (gen: number, event: EngineEventOf[T]) => Promise<void> };
/** One executor per effect kind of the status machine (session-state.ts). */
type EffectOf = { [E in SessionEffect as E['kind']]: E };
type EffectTable = { [K in SessionEffect['kind']]: (effect: EffectOf[K]) => Promise<void> | void };

function dispatchEngineEvent<T extends QueuedEngineEventType>(table: EngineEventTable, type: T, gen: number, event: EngineEventOf[T]): Promise<void> {
  const handler: EngineEventTable[T] = table[type];
  return handler(gen, event);
}

function runEffect<K extends SessionEffect['kind']>(table: EffectTable, kind: K, effect: EffectOf[K]): Promise<void> | void {
  const run: EffectTable[K] = table[kind];
  return run(effect);
}

/**
 * Owns one session on this gateway: its socket, its lease, its row, its retries and its events. What happens to its
 * status is decided by the status machine (session-state.ts, `transition`); the runner turns commands, socket outcomes
 * and engine events into its inputs and carries out its effects (`apply`). Its parts, each in a file of its own: the
 * fenced row writes (SessionRow), the inbound events stored durably and retried in place (InboundIntake), the history
 * batches on their own queue (HistoryQueue), the groups it creates and announces (SessionGroups), and the unlink of a
 * session that has no socket (unlinkOffline).
 *
 * Every state change runs through one serial queue, so commands and engine events never interleave
 * (a close arriving during a restart cannot resurrect the old socket). Each socket gets a generation
 * number; events of an older generation are ignored, which is how a socket we closed on purpose stays quiet.
 */
export class SessionRunner {
  /** the status machine (session-state.ts): changed only by `apply`; its status fields when they are recorded (setStatus) */
  private state: SessionState;
  private connection: EngineConnection | null = null;
  private generation = 0;
  /** true from a successful lease acquisition until the lease is released or lost */
  private leaseHeld = false;
  private reconnectTimer: unknown = null;
  private tail: Promise<unknown> = Promise.resolve();
  private readonly auth: AuthStateStore;
  private readonly statusWaiters = new Set<() => void>();
  private readonly clock: () => number;
  private readonly timers: Timers;
  private readonly log: Logger;
  private readonly sender: OutboundSender;
  private readonly lookups: EngineLookups;
  private readonly channels: FollowedChannelBook | undefined;
  private readonly chatEvents: ChatEvents | null;
  /** the session setting, read at each start: what history the engine asks for and the runner stores */
  private syncHistory: SyncHistoryMode = 'none';
  private readonly history: HistoryQueue;
  private readonly intake: InboundIntake;
  private readonly groups: SessionGroups;
  private readonly row: SessionRow;
  /** the row `begin` read, used by the connect that follows it (then cleared: a reconnect reads the row again) */
  private startRecord: SessionRecord | null = null;

  constructor(
    readonly sessionId: string,
    readonly organizationId: string,
    initialStatus: SessionStatus,
    private readonly deps: SessionRunnerDeps,
  ) {
    this.state = initialState(initialStatus);
    this.auth = deps.authState(sessionId);
    this.clock = deps.clock ?? Date.now;
    this.timers = deps.timers ?? realTimers;
    this.log = deps.logger.child({ sessionId });
    const { log, timers } = this;
    const handlers = buildSessionHandlers(
      { sessionId, organizationId, clock: this.clock, logger: log, live: () => (this.status === 'working' ? this.connection : null) },
      deps,
    );
    ({ sender: this.sender, chatEvents: this.chatEvents, lookups: this.lookups, channels: this.channels } = handlers);
    this.intake = new InboundIntake({ inbound: handlers.inbound, timers, log, reading: (gen) => this.reading(gen) });
    this.history = new HistoryQueue({ chatEvents: this.chatEvents, log, reading: (gen) => this.reading(gen), syncHistory: () => this.syncHistory });
    this.groups = new SessionGroups({ sessionId, organizationId, records: deps.records, clock: this.clock, log, publish: (named) => this.publish(named) });
    this.row = new SessionRow({ sessionId, records: deps.records, timers, log, serial: (task) => this.serial(task), fenced: () => this.fencedOut() });
  }

  get currentStatus(): SessionStatus {
    return this.state.status;
  }

  private get status(): SessionStatus {
    return this.state.status;
  }

  /** true while the session should hold a socket on this gateway */
  private get wanted(): boolean {
    return this.state.phase !== 'idle';
  }

  /** Holds (or is trying to hold) a socket; such sessions count against capacity and keep their lease renewed. */
  get isActive(): boolean {
    return this.wanted;
  }

  /**
   * Whether the heartbeat should renew this session's lease: wanted here AND acquired. A runner still
   * waiting for a dead gateway's lease to expire holds none, and must not be reported as having lost it.
   */
  get holdsLease(): boolean {
    return this.wanted && this.leaseHeld;
  }

  start(): Promise<SessionStatus> {
    return this.serial(async () => {
      if (this.wanted) return this.status;
      await this.begin(false);
      return this.status;
    });
  }

  /**
   * Starts the session because the sessions table places it here (the converge pass), unless the row no longer asks
   * for it: read again inside the serial section, so a stop (or a logout, a failure) that completed after the pass
   * listed the table wins, instead of the session coming back to `starting` (issue 20). The row read here also serves
   * the start itself (pairing, history setting, the first connect's proxy).
   */
  adopt(): Promise<SessionStatus> {
    return this.serial(async () => {
      if (this.wanted) return this.status;
      const record = await this.deps.records.find(this.sessionId);
      if (!record || record.desiredState !== 'running' || NOT_RESUMED.includes(record.status)) return this.status;
      await this.begin(false, record);
      return this.status;
    });
  }

  /** Stop then start. A paired session reconnects with its stored credentials; an unpaired one gets a fresh QR flow. */
  restart(): Promise<SessionStatus> {
    this.stopReading();
    return this.serial(async () => {
      await this.begin(true);
      return this.status;
    });
  }

  stop(): Promise<SessionStatus> {
    this.stopReading();
    return this.serial(async () => {
      await this.apply({ kind: 'stop' });
      return this.status;
    });
  }

  /**
   * Unlinks the device on the network and wipes the pairing; the row stays. A paired session that has no
   * socket here (stopped, failed, just moved) is connected briefly with its stored credentials to unlink it.
   * Logging out a logged-out session changes nothing.
   */
  async logout(unlinkTimeoutMs: number): Promise<SessionStatus> {
    const unlinkedLive = await this.serial(async () => {
      const conn = this.connection;
      if (!conn || this.status !== 'working') return false;
      await this.apply({ kind: 'unlink', live: true });
      await conn.logout().catch((err) => this.log.warn({ err: String(err) }, 'logout on the network failed'));
      return true;
    });
    if (!unlinkedLive) {
      // a logged-out session has nothing to unlink: its creds are not even read
      const paired = this.status !== 'logged_out' && (await this.auth.readCreds().catch(() => null)) !== null;
      // (read again: the status may have changed while the credentials were read)
      if (paired && this.state.status !== 'logged_out') {
        await this.serial(() => this.apply({ kind: 'unlink', live: false }));
        await unlinkOffline(
          { ...this.deps, sessionId: this.sessionId, auth: this.auth, timers: this.timers, log: this.log, fenceOn: (token) => (this.row.leaseToken = token) },
          unlinkTimeoutMs,
        );
      }
    }
    return this.serial(async () => {
      await this.apply({ kind: 'logout' });
      return this.status;
    });
  }

  /**
   * Closes the socket without logging out and gives the lease back; the row is left as is. Gateway shutdown, and the
   * hand-off of a session whose row now places it on another gateway (whose runner waits for this lease).
   *
   * In this order, so a handoff loses nothing: first stop reading the socket (at once, not behind the event queue:
   * what it hands over from now on, and what waits in the queue, is given back un-acknowledged); the event being stored
   * finishes (committed, then acknowledged) or, if it is being retried, is given back too; then the socket closes
   * (after the acknowledgements of what was stored) and only then is the lease released for the next holder, whose
   * connection gets everything un-acknowledged again from the network.
   */
  async shutdown(): Promise<void> {
    this.stopReading();
    await this.serial(() => this.apply({ kind: 'shutdown' }));
    // a send the network already took is recorded before the process lets go of PostgreSQL
    await this.sender.settled();
  }

  /** Another gateway holds the lease now: drop the socket at once and write nothing, the new holder owns the row. */
  leaseLost(): Promise<void> {
    this.stopReading();
    return this.serial(async () => {
      this.log.warn('session lease lost; closing the socket');
      this.leaseHeld = false;
      await this.apply({ kind: 'lease_lost' });
    });
  }

  /** Creates a group on the network; a creation asked again returns the first one's group (SessionGroups). */
  async createGroup(name: string, participants: string[]): Promise<GroupView> {
    const conn = this.connection;
    if (!conn || this.status !== 'working') {
      throw new DomainError('not_implemented', 'groups can only be created while the session is connected', { status: this.status });
    }
    return this.groups.create(conn, name, participants);
  }

  /**
   * One operation of SessionActionMap (libs/contracts/src/session-actions.ts) on the network, answered with what the
   * engine returned. Only a `working` session with an open connection can: anything else is 409 `conflict`, naming the
   * status, and nothing reaches the network.
   */
  async perform<A extends SessionActionName>(action: A, args: SessionActionArgs<A>): Promise<SessionActionResult<A>> {
    const conn = this.connection;
    if (!conn || this.status !== 'working') {
      throw new DomainError('conflict', `the session must be connected for this (status ${this.status})`, { status: this.status, action });
    }
    return conn.perform(action, args);
  }

  /**
   * A pairing code to type on the phone instead of scanning. From here the socket's QR rotations stop counting toward
   * QR_MAX_RETRIES (the user is typing) and the status says `pairing_code_requested`; a drop of this socket before the
   * pairing completes says `pairing_code_dropped: <cause>` until a new code is requested (docs/sessions.md).
   */
  async requestPairingCode(phoneNumber: string): Promise<{ code: string }> {
    const conn = this.connection;
    if (!conn || (this.status !== 'scan_qr_code' && this.status !== 'starting')) {
      throw new DomainError('conflict', 'a pairing code can only be requested while the session waits for pairing', { status: this.status });
    }
    const gen = this.generation;
    const code = await conn.requestPairingCode(phoneNumber);
    await this.serial(async () => {
      if (gen !== this.generation || this.connection !== conn) return;
      await this.apply({ kind: 'code_requested', gen });
    });
    return { code };
  }

  /** Whether the session is connected and can send now (the campaign scheduler asks before a step). */
  isWorking(): boolean {
    return this.status === 'working' && this.connection !== null;
  }

  /** The number check of `contacts:check` for one number (a campaign's `skipNotOnWhatsApp`). */
  async onWhatsApp(phoneNumber: string): Promise<boolean> {
    const { results } = await this.perform('contacts.check', { phoneNumbers: [phoneNumber] });
    return results[0]?.exists ?? false;
  }

  /**
   * Sends the session's queued messages (a signal from the API, the sweep); resolves when the drain is done.
   * `ordinary`: they are ordinary sends (the API's signal, scheduled sends that came due), which campaign work waits for.
   */
  drainQueued(ordinary = false): Promise<void> {
    return this.sender.trigger(ordinary);
  }

  /** Resolves once the session has left `starting` (or after ms), so a start command can answer with a useful status. */
  waitWhileStarting(ms: number): Promise<SessionStatus> {
    if (this.status !== 'starting' || ms <= 0) return Promise.resolve(this.status);
    return new Promise((resolve) => {
      const done = () => {
        if (this.status === 'starting' && !timedOut) return;
        this.statusWaiters.delete(done);
        this.timers.clearTimeout(timer);
        resolve(this.status);
      };
      let timedOut = false;
      const timer = this.timers.setTimeout(() => {
        timedOut = true;
        done();
      }, ms);
      this.statusWaiters.add(done);
    });
  }

  // --- the state machine -------------------------------------------------------------------------

  /**
   * The one place the status machine moves: the transition (session-state.ts) decides, then its effects are carried out
   * in order. The status, its reason and nextAttemptAt change when setStatus records them (an effect), so a reader
   * outside the serial queue never sees a status before the row says it.
   */
  private async apply(input: SessionInput): Promise<void> {
    const { state, effects } = transition(this.state, input, { now: this.clock(), random: this.deps.random ?? Math.random, settings: this.deps.settings });
    this.state = { ...state, status: this.state.status, reason: this.state.reason, nextAttemptAt: this.state.nextAttemptAt };
    for (const effect of effects) await runEffect(this.effects, effect.kind, effect);
  }

  private readonly effects: EffectTable = {
    status: (e) => this.setStatus(e.status, e.reason, e.patch ?? {}, e.nextAttemptAt ?? null),
    publish: (e) => this.publish(e.event),
    open_socket: async (e) => {
      if (e.ifCurrent !== undefined && (e.ifCurrent !== this.generation || !this.wanted)) return;
      await this.openSocket();
    },
    schedule_retry: ({ gen, delayMs }) => {
      this.reconnectTimer = this.timers.setTimeout(() => {
        this.reconnectTimer = null;
        void this.serial(async () => {
          if (gen === this.generation) await this.apply({ kind: 'retry_due' });
        }).catch((err) => this.log.error({ err: String(err) }, 'reconnect failed'));
      }, delayMs);
    },
    cancel_retry: () => this.clearReconnect(),
    close_socket: (e) => this.teardown({ keepSocket: e.keepSocket }),
    show_qr: ({ qr, expiresAt, ttlMs }) => this.deps.qr.show(this.sessionId, { qr, expiresAt }, ttlMs),
    clear_qr: () => this.deps.qr.clear(this.sessionId),
    clear_credentials: () => this.auth.clear(),
    release_lease: (e) => (e.quiet ? this.releaseLease().catch(() => undefined) : this.releaseLease()),
    forget_session: () => this.deps.engine.forget(this.sessionId),
    log: (e) => (e.fields ? this.log[e.level](e.fields, e.message) : this.log[e.level](e.message)),
    client_version_refused: () => this.deps.clientVersionRefused?.(this.sessionId),
    // the drain runs beside the event queue
    drain_sends: () => void this.sender.trigger(),
  };

  /** `known`: the row as just read inside the serial section (adopt); otherwise it is read here. */
  private async begin(restart: boolean, known?: SessionRecord): Promise<void> {
    // the account on the row is what pairing left there (cleared by a logout); unknown (store down) counts as paired,
    // since giving up on a paired session costs its user more than retrying an unpaired one
    const record = known ?? (await this.deps.records.find(this.sessionId).catch(() => undefined));
    // the first connect reads its proxy from this same read rather than a second one
    this.startRecord = record ?? null;
    this.syncHistory = record?.syncHistory ?? 'none';
    await this.apply({ kind: 'start', restart, paired: record === undefined || (record !== null && record.phoneNumber !== null) });
  }

  /** Runs inside the serial queue. */
  private async openSocket(): Promise<void> {
    const gen = ++this.generation;
    // only the attempt right after `begin` may use its read; any later one reads the row again
    const fresh = this.startRecord;
    this.startRecord = null;
    this.clearReconnect();
    if (!this.leasesTrusted()) {
      // the watchdog is about to close every socket of this gateway; the adopt loop restarts what is still ours
      this.log.warn('lease renewals lapsed; not opening a socket');
      return;
    }
    let token: number | null;
    try {
      token = await this.deps.leases.acquire(this.sessionId, () => this.deps.records.takeLeaseToken(this.sessionId));
    } catch (err) {
      // Redis or PostgreSQL unreachable: a failed connect like any other (retried with backoff), never a runner that
      // waits for a timer nobody set
      await this.apply({ kind: 'connect_failed', gen, cause: `lease unavailable: ${err instanceof Error ? err.message : String(err)}` });
      return;
    }
    this.leaseHeld = token !== null;
    if (token !== null) this.row.leaseToken = token;
    if (!this.leaseHeld) {
      await this.apply({ kind: 'lease_held_elsewhere', gen });
      return;
    }
    let conn: EngineConnection;
    try {
      // the proxy is read at every connect (a PATCH applies from the next one); a row that cannot be read fails the
      // connect rather than connecting without the proxy the owner asked for
      const proxyUrl = (fresh ?? (await this.deps.records.find(this.sessionId)))?.proxyUrl ?? null;
      conn = await this.deps.engine.connect({
        sessionId: this.sessionId,
        auth: this.auth,
        logger: this.log,
        onEvent: (event) => this.onEngineEvent(gen, event),
        lookups: this.lookups,
        ...(this.channels ? { channels: this.channels } : {}),
        ...(proxyUrl ? { proxyUrl } : {}),
        syncHistory: this.syncHistory,
      });
    } catch (err) {
      if (gen !== this.generation) return;
      if (err instanceof CredentialsUnusableError) await this.apply({ kind: 'credentials_unusable', detail: err.detail });
      else await this.apply({ kind: 'connect_failed', gen, cause: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (gen !== this.generation) {
      await conn.close().catch(() => undefined);
      return;
    }
    this.connection = conn;
  }

  /**
   * Takes one engine event; the promise settles when it is durable (the engine may acknowledge it) or was not taken
   * (the engine must not: the network delivers it again). See EngineEventSink.
   */
  private onEngineEvent(gen: number, event: EngineEvent): Promise<void> {
    // a socket event that arrives after a pause must not act (reconnect, write) before the watchdog closes it
    if (!this.leasesTrusted()) return Promise.reject(new EventNotTakenError(event.type, 'lease renewals lapsed'));
    if (event.type === 'history') return this.history.take(gen, event);
    return this.serial(async () => {
      if (gen !== this.generation) {
        // a socket we silenced: what it still hands over belongs to the next connection's redelivery
        if (isInboundEvent(event)) throw new EventNotTakenError(event.type, 'the socket was replaced');
        return;
      }
      await dispatchEngineEvent(this.engineEvents, event.type, gen, event);
    }).catch((err) => {
      if (!(err instanceof SessionFencedError) && !(err instanceof EventNotTakenError)) {
        this.log.error({ err: String(err), event: event.type }, 'engine event handling failed');
      }
      throw err;
    });
  }

  private leasesTrusted(): boolean {
    return this.deps.leasesTrusted?.() ?? true;
  }

  /** What the runner does with each engine event of its queue; a socket's own events drive the status machine. */
  private readonly engineEvents: EngineEventTable = (() => {
    const inbound = (gen: number, event: InboundEngineEvent) => this.intake.store(gen, event, this.connection);
    const table: EngineEventTable = {
      qr: (gen, { qr }) => this.apply({ kind: 'qr', gen, qr }),
      open: (_gen, { account }) => this.apply({ kind: 'open', account }),
      close: (gen, { reason, statusCode, message }) => {
        this.connection = null;
        return this.apply({ kind: 'close', gen, reason, statusCode, message });
      },
      group: (_gen, event) => this.groups.learnt(event.group, event.action),
      'group-metadata': (_gen, event) => this.deps.records.saveGroup(this.organizationId, this.sessionId, event.group),
      'chat-update': async (_gen, event) => {
        await this.chatEvents?.update(event);
      },
      message: inbound,
      edit: inbound,
      revoke: inbound,
      receipt: inbound,
      reaction: inbound,
      'poll-vote': inbound,
      presence: inbound,
      call: inbound,
      'group-update': inbound,
      'group-participants': inbound,
      contacts: inbound,
      blocklist: inbound,
      label: inbound,
      status: inbound,
      'channel-message': inbound,
    };
    return table;
  })();

  /** Whether the socket of `gen` is still the one this runner reads, with a lease it may trust. */
  private reading(gen: number): boolean {
    return gen === this.generation && this.leaseHeld && this.leasesTrusted();
  }

  /**
   * Retires the current socket at once, outside the serial queue: its later events (and those already queued) are not
   * taken, and an event being retried gives up. The socket itself is closed by `teardown`, inside the queue.
   */
  private stopReading(): void {
    this.generation += 1;
    this.intake.socketRetired();
  }

  /** Silences the current socket (its late events are ignored) and closes it unless the caller still needs it. */
  private async teardown(options: { keepSocket?: boolean } = {}): Promise<void> {
    this.stopReading();
    this.clearReconnect();
    const conn = this.connection;
    this.connection = null;
    if (conn && !options.keepSocket) await conn.close().catch((err) => this.log.warn({ err: String(err) }, 'close failed'));
  }

  /** Every path that lets the session go from this gateway comes here: the engine forgets it too. */
  private async releaseLease(): Promise<void> {
    this.deps.engine.forget(this.sessionId);
    this.leaseHeld = false;
    await this.deps.leases.release(this.sessionId);
  }

  /**
   * The row refused a write: another gateway holds the session now. Close quietly (its holder owns the row and the
   * events), and hand back the lease in case it is still ours (compare-and-delete: another holder's is left alone).
   */
  private async fencedOut(): Promise<never> {
    this.log.warn({ leaseToken: this.row.leaseToken }, 'session row refused a write (fenced); closing the socket');
    await this.apply({ kind: 'fenced' });
    throw new SessionFencedError(this.sessionId);
  }

  private clearReconnect(): void {
    if (this.reconnectTimer !== null) this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
  }

  /**
   * Records and announces a status. The same status with a new reason is announced too (`starting` →
   * `starting`, reason `connect_failed: …`): that is how a session that cannot connect yet says why.
   */
  private async setStatus(next: SessionStatus, reason: string, patch: SessionRecordPatch = {}, nextAttemptAt: number | null = null): Promise<void> {
    const previous = this.state.status;
    // a runner that has not set a status yet (a resumed session) has nothing to correct with a same-status event
    const reasonChanged = this.state.reason !== null && reason !== this.state.reason;
    if (previous === next && !reasonChanged && nextAttemptAt === this.state.nextAttemptAt && Object.keys(patch).length === 0) return;
    this.state = { ...this.state, status: next, reason, nextAttemptAt };
    await this.row.write({ ...patch, status: next, lastReason: reason, nextAttemptAt: nextAttemptAt === null ? null : new Date(nextAttemptAt) });
    if (previous !== next || reasonChanged) {
      await this.publish({ event: 'session.status', payload: { status: next, previousStatus: previous, reason } });
      for (const waiter of [...this.statusWaiters]) waiter();
    }
  }

  /**
   * Announces a change of the session's own state. A publish that fails (the database is down) is logged and dropped:
   * the state machine goes on (the row says the current state once it is written); it never holds up a reconnect.
   */
  private async publish(named: CatalogEvent): Promise<void> {
    try {
      await this.deps.events.publish({ ...named, organizationId: this.organizationId, sessionId: this.sessionId });
    } catch (err) {
      this.log.warn({ err: String(err), event: named.event }, 'publishing a session event failed; dropped');
    }
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
