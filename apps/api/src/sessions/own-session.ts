import { DomainError } from '@app/contracts';
import type { OwnedSession, SessionsRepository } from '@app/database';

/** The 404 of a session that is not the caller's organization's (or not at all): one answer for both, so ids do not leak. */
export const sessionNotFound = (id: string) => new DomainError('not_found', 'session not found', { id });

/** The caller's organization's session `id`, or its 404: the message routes' one lookup of a session. */
export async function findOwnSession(sessions: SessionsRepository, organizationId: string, id: string): Promise<OwnedSession> {
  const session = await sessions.findInOrganization(organizationId, id);
  if (!session) throw sessionNotFound(id);
  return session;
}
