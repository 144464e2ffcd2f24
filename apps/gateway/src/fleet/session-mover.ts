import type { BeforeApplicationShutdown } from '@nestjs/common';
import type { SessionStatus, SessionStatusPayload } from '@app/contracts';
import type { SessionsRepository, Tx } from '@app/database';
import type { EventPublisher } from '@app/events';
import type { SessionPlacement } from '@app/fleet';
import type { SessionMoveReason } from '../gateway-metrics';

export type MoveReason = SessionMoveReason;

/** A session as a mover needs it: who to tell (its organization) and what to say (its status, unchanged by a move). */
export interface MovableSession {
  id: string;
  organizationId: string;
  status: SessionStatus;
}

/** The payload of the `session.status` event a move publishes: the status is unchanged at that moment. */
export interface SessionMovedPayload extends SessionStatusPayload {
  reason: MoveReason;
  fromGatewayId: string;
  toGatewayId: string;
}

/** pino's (fields, message) order */
export interface MoverLogger {
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

export interface SessionMoverPorts {
  placement: Pick<SessionPlacement, 'choose'>;
  sessions: Pick<SessionsRepository, 'moveManyToGateway' | 'findRuntime'>;
  /** the fast path to a new holder: one signal (AdoptSignal) and it converges on the table at once */
  signal(gatewayId: string): Promise<void>;
  events: Pick<EventPublisher, 'build' | 'publishEnvelopes'>;
  /** moves in/out by reason (gateway metrics) */
  metrics: { recordMove(reason: MoveReason, from: string, to: string): void };
  logger: MoverLogger;
}

/**
 * Runs one conditional move statement: at once (a drain), or inside the leader's fence (`PgLeaderLease.fenced`: only
 * while its term holds, nothing written otherwise).
 */
export type MoveFence = (move: (manager?: Tx) => Promise<string[]>) => Promise<string[]>;

const unfenced: MoveFence = (move) => move();

/** Moves per conditional update statement, and events per outbox insert. */
const MOVE_BATCH = 500;
const EVENT_BATCH = 500;

/**
 * What a move of a session between gateways is, for every mover (a drain, the leader's failover and rebalance): the
 * sessions table is the instruction. A conditional update of the row (racing movers: one wins), a `session.status`
 * event saying why (the status itself is unchanged at that moment; the new holder's runner reports what follows), the
 * move counted, and one signal per new holder however many sessions it got (and to a rebalance's live source) — in the
 * background, and harmless when it fails, since every gateway adopts what the table assigns it with its next converge pass.
 */
export class SessionMover implements BeforeApplicationShutdown {
  private stopped = false;

  constructor(private readonly ports: SessionMoverPorts) {}

  /** Moves one session off `from` to the gateway placement chooses: the target, or null when another mover won. */
  async move(sessionId: string, from: string, reason: MoveReason): Promise<string | null> {
    const session = await this.ports.sessions.findRuntime(sessionId);
    if (!session) return null;
    const { gatewayId: to } = await this.ports.placement.choose();
    const moved = await this.moveAll(from, [session], reason, async () => to);
    return moved.length > 0 ? to : null;
  }

  /**
   * Moves many sessions off `from`, each to `target()`'s answer (asked once per session, in order), MOVE_BATCH rows per
   * conditional update, and announces the moves it won in batches. `lost(to)` hears of each move another mover won
   * first, so a placement that counted it can give the place back. `fence` runs each statement (the leader's term).
   * Resolves with the moves won.
   */
  async moveAll(
    from: string,
    sessions: readonly MovableSession[],
    reason: MoveReason,
    target: () => Promise<string>,
    lost: (to: string) => void = () => undefined,
    fence: MoveFence = unfenced,
  ): Promise<Array<{ session: MovableSession; to: string }>> {
    const moved: Array<{ session: MovableSession; to: string }> = [];
    try {
      for (let i = 0; i < sessions.length; i += MOVE_BATCH) {
        const batch: Array<{ session: MovableSession; to: string }> = [];
        for (const session of sessions.slice(i, i + MOVE_BATCH)) batch.push({ session, to: await target() });
        const pairs = batch.map(({ session, to }) => ({ id: session.id, to }));
        const won = new Set(await fence((manager) => this.ports.sessions.moveManyToGateway(from, pairs, manager)));
        for (const move of batch) {
          if (won.has(move.session.id)) moved.push(move);
          else lost(move.to);
        }
      }
    } finally {
      // what was won is announced even when a later move failed
      await this.announce(moved, from, reason);
    }
    return moved;
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
  }

  private async announce(moved: Array<{ session: MovableSession; to: string }>, from: string, reason: MoveReason): Promise<void> {
    const { events, metrics, logger } = this.ports;
    const envelopes = moved.map(({ session, to }) => {
      const payload: SessionMovedPayload = { status: session.status, previousStatus: session.status, reason, fromGatewayId: from, toGatewayId: to };
      return events.build({ event: 'session.status', organizationId: session.organizationId, sessionId: session.id, payload });
    });
    for (let i = 0; i < envelopes.length; i += EVENT_BATCH) await events.publishEnvelopes(envelopes.slice(i, i + EVENT_BATCH));
    for (const { to } of moved) metrics.recordMove(reason, from, to);
    if (moved.length === 1) logger.info({ sessionId: moved[0].session.id, from, to: moved[0].to, reason }, 'session moved');
    if (this.stopped) return;
    // a rebalance takes sessions off a live gateway, which must let go before the new holder can take the lease: it
    // converges on the signal too, instead of at its next safety sweep (a failover's source is dead, a drain's is the mover)
    const told = new Set(moved.map(({ to }) => to));
    if (reason === 'rebalance' && moved.length > 0) told.add(from);
    for (const gatewayId of told) {
      void this.ports.signal(gatewayId).catch((err) => logger.debug({ gatewayId, err: String(err) }, 'adopt signal failed'));
    }
  }
}
