import { testDb } from '../support/seed';
import type { DataSource } from 'typeorm';
import { newId, OrganizationsRepository, Session, SessionsRepository } from '@app/database';

/** Rows the repository specs build on, written through the repositories themselves. */
export async function newOrganization(db: DataSource, name = 'Repository spec'): Promise<string> {
  return (await new OrganizationsRepository(await testDb()).create({ id: newId('org'), name, createdAt: new Date() })).id;
}

export async function newSession(db: DataSource, organizationId: string, fields: Partial<Session> = {}): Promise<Session> {
  const now = new Date();
  return new SessionsRepository(await testDb()).create({
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
}
