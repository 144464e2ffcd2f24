import type { Logger } from 'pino';
import { CommandMap, CommandName, CommandRequest, DomainError, SessionActionArgs, SessionActionName, SessionSnapshot } from '@app/contracts';
import type { LoopDelayAdmission } from './loop-delay-admission';
import { SessionRunner, SessionRunnerDeps } from './session-runner';
import type { PlacedSession } from '../store-ports';

export interface ConvergeResult {
  /** sessions placed here that this gateway started */
  started: number;
  /** sessions placed elsewhere now that it let go of */
  handedOff: number;
}

/** `remaining`: ms left before the command's deadline, less the margin its reply needs. */
type CommandTable = { [N in CommandName]: (args: CommandMap[N]['args'], remaining: () => number) => Promise<CommandMap[N]['result']> };

/** Longest a start/restart waits for the first QR or the connection before answering with `starting`. */
const SETTLE_MAX_MS = 2000;
/** Margin kept before a command's deadline so the reply still reaches the API in time. */
const REPLY_MARGIN_MS = 250;

/**
 * The sessions placed on this gateway: one SessionRunner each, created on first command.
 * Commands from the API arrive here after the command worker has checked their deadline.
 */
export class SessionHost {
  private readonly runners = new Map<string, SessionRunner>();
  private converging: Promise<ConvergeResult> | null = null;

  constructor(
    private readonly gatewayId: string,
    private readonly deps: SessionRunnerDeps,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
    /** sockets opened at once at most when taking sessions over: a burst must not hit the network in one instant */
    private readonly adoptConcurrency = 8,
    /** admits logins and adoptions by the event loop's delay (none: only the bound above) */
    private readonly admission?: Pick<LoopDelayAdmission, 'admit' | 'restart'>,
  ) {}

  /** Ids of the sessions holding (or trying to hold) a socket here. */
  activeSessionIds(): string[] {
    return [...this.runners.values()].filter((r) => r.isActive).map((r) => r.sessionId);
  }

  /** Sessions holding (or trying to hold) a socket here. */
  get sessionCount(): number {
    let n = 0;
    for (const r of this.runners.values()) if (r.isActive) n += 1;
    return n;
  }

  /** Sessions whose lease this gateway holds and must keep renewing. */
  leasedSessionIds(): string[] {
    return [...this.runners.values()].filter((r) => r.holdsLease).map((r) => r.sessionId);
  }

  async execute<N extends CommandName>(request: CommandRequest<N>): Promise<CommandMap[N]['result']> {
    // the name comes off the wire: one the table does not hold is refused, not looked up on its prototype
    if (!Object.hasOwn(this.commands, request.name)) {
      throw new DomainError('validation_error', `unknown command ${String((request as { name: unknown }).name)}`);
    }
    const handler: CommandTable[N] = this.commands[request.name];
    return handler(request.args, () => request.deadline - this.clock() - REPLY_MARGIN_MS);
  }

  /** One handler per command name, each typed by its CommandMap entry: a new command fails to compile until it has one. */
  private readonly commands: CommandTable = {
    'session.start': ({ sessionId }, remaining) => this.startOrRestart(sessionId, 'start', remaining),
    'session.restart': ({ sessionId }, remaining) => this.startOrRestart(sessionId, 'restart', remaining),
    'session.stop': async ({ sessionId }) => {
      const runner = await this.runner(sessionId);
      return this.snapshot(runner, await runner.stop());
    },
    'session.logout': async ({ sessionId }, remaining) => {
      const runner = await this.runner(sessionId);
      return this.snapshot(runner, await runner.logout(remaining() / 2));
    },
    'session.delete': async ({ sessionId }, remaining) => {
      const runner = await this.runner(sessionId);
      await runner.logout(remaining() / 2);
      this.runners.delete(sessionId);
      return { deleted: true };
    },
    'session.request-code': async ({ sessionId, phoneNumber }) => (await this.runner(sessionId)).requestPairingCode(phoneNumber),
    'group.create': async ({ sessionId, name, participants }) => (await this.runner(sessionId)).createGroup(name, participants),
    // the action's arguments were validated by the API against SessionActionMap; the wire carries them untyped
    'session.action': async ({ sessionId, action, args }) => (await this.runner(sessionId)).perform(action, args as SessionActionArgs<SessionActionName>),
  };

  private async startOrRestart(sessionId: string, command: 'start' | 'restart', remaining: () => number): Promise<SessionSnapshot> {
    const runner = await this.runner(sessionId);
    // a login costs the engine's work on this thread: it waits while the loop is late, but not past half its deadline
    const admitted = await this.admission?.admit(this.clock() + remaining() / 2);
    try {
      if (command === 'start') await runner.start();
      else await runner.restart();
    } finally {
      admitted?.();
    }
    return this.snapshot(runner, await runner.waitWhileStarting(Math.min(SETTLE_MAX_MS, remaining() / 2)));
  }

  /** The runner of a session held here (the campaign scheduler's way to its queue and its connection). */
  runnerOf(sessionId: string): SessionRunner | undefined {
    const runner = this.runners.get(sessionId);
    return runner?.isActive ? runner : undefined;
  }

  /** The API queued messages for a session (SendSignal); a session not held here is none of this gateway's business. */
  signal(sessionId: string): void {
    void this.runners.get(sessionId)?.drainQueued(true);
  }

  /**
   * The reconciler behind the send signal: drains every session held here that has queued rows in PostgreSQL, so a
   * signal lost with Redis (or never sent: an API that died after its insert) only delays a send.
   */
  async sweepQueued(): Promise<void> {
    const held = await this.deps.messages.sessionsWithQueued([...this.runners.keys()]);
    await Promise.all(held.map((id) => this.runners.get(id)?.drainQueued()));
  }

  /** After a gateway restart: take back the sessions placed here that should be running, from stored auth state. */
  async resume(): Promise<number> {
    return (await this.converge()).started;
  }

  /**
   * The sessions table is the instruction: starts the sessions placed here that this gateway does not hold, and hands
   * off the ones it holds whose row names another gateway now (moved by failover, drain or rebalance): their socket
   * closes cleanly and the lease is released, and the new holder's runner, waiting for that lease, opens the next
   * socket, so two never overlap. One pass at a time; a caller arriving during a pass shares it.
   */
  converge(): Promise<ConvergeResult> {
    this.converging ??= this.convergeOnce().finally(() => (this.converging = null));
    return this.converging;
  }

  private async convergeOnce(): Promise<ConvergeResult> {
    const handedOff = await this.handOffMoved();
    const placed = await this.deps.records.resumable(this.gatewayId);
    const queue = placed.filter((s) => !this.runners.get(s.id)?.isActive);
    let started = 0;
    const worker = async () => {
      for (let placedHere = queue.shift(); placedHere !== undefined; placedHere = queue.shift()) {
        try {
          // adopt, not start: the runner reads the row again in its serial section, so a stop that completed since
          // the list above was read is not undone (issue 20)
          const admitted = await this.admission?.admit();
          try {
            const runner = this.runnerFor(placedHere);
            await runner.adopt();
            if (runner.isActive) started += 1;
          } finally {
            admitted?.();
          }
        } catch (err) {
          this.logger.error({ sessionId: placedHere.id, err: String(err) }, 'starting a session placed here failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.adoptConcurrency, queue.length) }, worker));
    return { started, handedOff };
  }

  /** Hands off what moved away, a few at a time: each waits for its in-flight event and its socket's close. */
  private async handOffMoved(): Promise<number> {
    const moved = await this.deps.records.notPlacedOn(this.activeSessionIds(), this.gatewayId);
    const queue = [...moved];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) await this.handOff(id);
    };
    await Promise.all(Array.from({ length: Math.min(this.adoptConcurrency, queue.length) }, worker));
    return moved.length;
  }

  /**
   * Lets go of one session (its row names another gateway, or it is being drained away): closes the socket without
   * logging out, releases the lease; the status stays for the new holder to write.
   */
  async handOff(sessionId: string): Promise<void> {
    const runner = this.runners.get(sessionId);
    if (!runner) return;
    this.runners.delete(sessionId);
    await runner.shutdown().catch((err) => this.logger.warn({ sessionId, err: String(err) }, 'handing a session off failed'));
    this.logger.info({ sessionId }, 'session handed off');
  }

  /**
   * A stray fault was traced to this session (StrayFaults): its connection may be broken, so it is closed and opened
   * again. False when the session is not held here (nothing to restart).
   */
  async restartAfterFault(sessionId: string): Promise<boolean> {
    const runner = this.runners.get(sessionId);
    if (!runner?.isActive) return false;
    await runner.restart();
    return true;
  }

  async leaseLost(sessionIds: string[]): Promise<void> {
    for (const id of sessionIds) {
      const runner = this.runners.get(id);
      if (!runner) continue;
      this.runners.delete(id);
      await runner.leaseLost();
    }
  }

  /** Closes every socket without logging out and hands the leases back. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.runners.values()].map((r) => r.shutdown().catch(() => undefined)));
    this.runners.clear();
  }

  /**
   * The lease renewals lapsed (LeaseWatchdog): every lease may be expiring, so every socket closes now, writing nothing
   * (a new holder may own the rows already). Sessions still placed here come back with the next converge pass.
   */
  async closeAllUnfenced(): Promise<void> {
    // what comes back after the lapse ramps up from one adoption at a time
    this.admission?.restart();
    await this.leaseLost([...this.runners.keys()]);
  }

  private snapshot(runner: SessionRunner, status = runner.currentStatus): SessionSnapshot {
    return { sessionId: runner.sessionId, status };
  }

  /** The session's runner, created from its row (listed or read) unless it has one. */
  private runnerFor(placed: PlacedSession): SessionRunner {
    const existing = this.runners.get(placed.id);
    if (existing) return existing;
    const runner = new SessionRunner(placed.id, placed.organizationId, placed.status, this.deps);
    this.runners.set(placed.id, runner);
    return runner;
  }

  private async runner(sessionId: string): Promise<SessionRunner> {
    const existing = this.runners.get(sessionId);
    if (existing) return existing;
    const record = await this.deps.records.find(sessionId);
    if (!record) throw new DomainError('not_found', 'session not found', { sessionId });
    // two commands for a new session may race through the lookup above; the first runner wins (runnerFor keeps it)
    return this.runnerFor(record);
  }
}
