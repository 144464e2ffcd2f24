import { findOwnSession } from './own-session';
import { Injectable } from '@nestjs/common';
import { DomainError, SessionActionArgs, SessionActionName, SessionActionResult } from '@app/contracts';
import { OwnedSession, Session, SessionsRepository } from '@app/database';
import { CommandBus, GatewayDirectory } from '@app/fleet';
import { conflictReason } from './session.view';

/**
 * The API's side of the `session.action` seam (libs/contracts/src/session-actions.ts): every CONTRACT 12/13 operation
 * that needs the network goes through `perform`, which answers as the rest of the API does:
 * 404 `not_found` for a session of another organization (or none), 409 `conflict` when the session is not `working`
 * (naming its status), 503 `gateway_unavailable` when its gateway is gone, and the engine's own refusal otherwise.
 * Storing what the answer changed, and the events that announce it, are the calling service's.
 */
@Injectable()
export class SessionActions {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly directory: GatewayDirectory,
    private readonly bus: CommandBus,
  ) {}

  /** The session of this organization, or 404. */
  async session(organizationId: string, sessionId: string): Promise<OwnedSession> {
    return findOwnSession(this.sessions, organizationId, sessionId);
  }

  /** The session, which must be `working` (409 otherwise): for operations that reach the network. */
  async connected(organizationId: string, sessionId: string): Promise<OwnedSession> {
    const session = await this.session(organizationId, sessionId);
    if (session.status !== 'working') {
      throw new DomainError('conflict', `the session must be connected for this (status ${session.status})`, {
        status: session.status,
        reason: conflictReason(session),
      });
    }
    return session;
  }

  async perform<A extends SessionActionName>(
    organizationId: string,
    sessionId: string,
    action: A,
    args: SessionActionArgs<A>,
  ): Promise<SessionActionResult<A>> {
    return this.performOn(await this.connected(organizationId, sessionId), action, args);
  }

  /** As perform, for a session the caller has already found (and checked `working`). */
  async performOn<A extends SessionActionName>(session: Session, action: A, args: SessionActionArgs<A>): Promise<SessionActionResult<A>> {
    if (!session.gatewayId || !(await this.directory.isAlive(session.gatewayId))) {
      throw new DomainError('gateway_unavailable', 'the session’s gateway is not available', { gatewayId: session.gatewayId });
    }
    return (await this.bus.send(session.gatewayId, 'session.action', { sessionId: session.id, action, args })) as SessionActionResult<A>;
  }
}
