import { testDb } from '../support/seed';
import type { DataSource } from 'typeorm';
import { newId, OrganizationsRepository, OwnedSession, Session, SessionsRepository } from '@app/database';

/** Rows the repository specs build on, written through the repositories themselves. */
export async function newOrganization(db: DataSource, name = 'Repository spec'): Promise<string> {
  return (await new OrganizationsRepository(await testDb()).create({ id: newId('org'), name, createdAt: new Date() })).id;
}

/** A new session of the organization, as the API holds one after checking it (`findInOrganization`). */
export async function newSession(db: DataSource, organizationId: string, fields: Partial<Session> = {}): Promise<OwnedSession> {
  const now = new Date();
  const sessions = new SessionsRepository(await testDb());
  const created = await sessions.create({
    id: newId('ses'),
    organizationId,
    createdByUserId: null,
    gatewayId: null,
    label: 'spec',
    status: 'stopped',
    desiredState: 'running',
    phoneNumber: null,
    waJid: null,
    waLid: null,
    isAdminSession: false,
    autoRead: true,
    presenceTyping: false,
    ratePerMin: 20,
    ratePerHour: 200,
    createdAt: now,
    updatedAt: now,
    lastConnectedAt: null,
    ...fields,
  });
  return ownedSession(organizationId, created.id);
}

/** The organization's session `id`, checked as the API checks it. */
export async function ownedSession(organizationId: string, id: string): Promise<OwnedSession> {
  const session = await new SessionsRepository(await testDb()).findInOrganization(organizationId, id);
  if (!session) throw new Error(`no session ${id} in ${organizationId}`);
  return session;
}
