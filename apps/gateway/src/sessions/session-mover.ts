import type { Logger } from 'pino';
import type { SessionsRepository } from '@app/database';
import type { EventPublisher } from '@app/events';
import type { CommandBus, SessionPlacement } from '@app/fleet';

export type MoveReason = 'failover' | 'drain' | 'rebalance';

export interface SessionMoverDeps {
  placement: Pick<SessionPlacement, 'choose'>;
  sessions: Pick<SessionsRepository, 'moveToGateway' | 'findRuntime'>;
  commands: Pick<CommandBus, 'send'>;
  events: Pick<EventPublisher, 'publish'>;
  /** moves in/out by reason (gateway metrics) */
  metrics: { recordMove(reason: MoveReason, from: string, to: string): void };
  logger: Logger;
}

/**
 * One move of a session between gateways, as every mover does it: the sessions table is the instruction. A conditional
 * move of the row (racing movers: one wins), a nudge to the target (it would find the session with its next converge
 * pass anyway, so a failed nudge is harmless), and a `session.status` event saying why (the status itself is unchanged
 * at that moment; the new holder's runner reports what follows).
 */
export class SessionMover {
  constructor(private readonly deps: SessionMoverDeps) {}

  /** Moves `sessionId` from `from` to the gateway placement chooses; the target, or null when another mover won. */
  async move(sessionId: string, from: string, reason: MoveReason): Promise<string | null> {
    const { placement, sessions, commands, events, metrics, logger } = this.deps;
    const { gatewayId: to } = await placement.choose();
    if (!(await sessions.moveToGateway(sessionId, from, to))) return null;
    metrics.recordMove(reason, from, to);
    commands.send(to, 'session.start', { sessionId }).catch((err) => logger.debug({ sessionId, to, err: String(err) }, 'nudge failed'));
    const row = await sessions.findRuntime(sessionId);
    if (row) {
      await events.publish({
        event: 'session.status',
        organizationId: row.organizationId,
        sessionId,
        payload: { status: row.status, previousStatus: row.status, reason, fromGatewayId: from, toGatewayId: to },
      });
    }
    logger.info({ sessionId, from, to, reason }, 'session moved');
    return to;
  }
}
