import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError, Role } from '@app/contracts';
import { hashPassword, newApiKeyToken, sha256Hex, verifyPassword } from '@app/crypto';
import { InvitationsRepository, newId, PasswordResetsRepository, User, UsersRepository, Db } from '@app/database';
import { actorOf, type AuditContext } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import { AuthService, LoginToken } from '../auth/auth.service';
import type { Principal } from '../common/principal';
import type { CreatedInvitationResponse, InvitationResponse, MemberResponse, PasswordResetLinkResponse } from './dto/organization.dto';
import { LinkMailer } from './link-mailer';
import { PrincipalAnnouncer } from './principal-announcer';
import { assertMayHandleRole } from './rights';

const memberNotFound = (id: string) => new DomainError('not_found', 'member not found', { id });
const badLink = () => new DomainError('unauthorized', 'the link is unknown, used, withdrawn or expired');

/** A single-use link token: random, shown once, stored as its SHA-256. The prefix says what it is for. */
const linkToken = (prefix: 'gwi_' | 'gwr_') => prefix + newApiKeyToken().slice(4);

const toMember = (u: User): MemberResponse => ({
  id: u.id,
  email: u.email,
  name: u.name ?? null,
  role: u.role,
  createdAt: u.createdAt.toISOString(),
  lastLoginAt: u.lastLoginAt ? u.lastLoginAt.toISOString() : null,
});

/**
 * Members of an organization, their invitations and their passwords (CONTRACT 14). Every change and its audit entry
 * commit in one transaction; a change to a person is announced to every API replica after the commit, so a removed
 * member's tokens and sockets end at once.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly db: Db,
    private readonly config: ApiConfig,
    private readonly users: UsersRepository,
    private readonly invitations: InvitationsRepository,
    private readonly resets: PasswordResetsRepository,
    private readonly audit: AuditTrail,
    private readonly announcer: PrincipalAnnouncer,
    private readonly mailer: LinkMailer,
    private readonly auth: AuthService,
  ) {}

  async list(organizationId: string): Promise<MemberResponse[]> {
    return (await this.users.listLiveInOrganization(organizationId)).map(toMember);
  }

  /** Only an owner makes or unmakes owners; the last owner cannot be demoted (409). */
  async changeRole(p: Principal, ctx: AuditContext, userId: string, role: Role): Promise<MemberResponse> {
    const updated = await this.db.transaction(async (tx) => {
      const owners = await this.users.lockOwners(p.organizationId, tx);
      const member = await this.users.findLiveInOrganization(p.organizationId, userId, tx);
      if (!member) throw memberNotFound(userId);
      assertMayHandleRole(p, member.role);
      assertMayHandleRole(p, role);
      if (member.role === 'owner' && role !== 'owner' && owners.length <= 1) {
        throw new DomainError('conflict', 'the last owner cannot be demoted', { reason: 'last_owner' });
      }
      if (member.role === role) return member;
      await this.users.changeRole(userId, role, tx);
      await this.audit.record(tx, p.organizationId, ctx, { action: 'member.role', target: { type: 'member', id: userId }, changes: ['role'] });
      return { ...member, role };
    });
    await this.announcer.announce({ kind: 'user', id: userId });
    return toMember(updated);
  }

  /** Removes a member (its JWTs stop working at once on every replica); the last owner cannot be removed (409). */
  async remove(p: Principal, ctx: AuditContext, userId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const owners = await this.users.lockOwners(p.organizationId, tx);
      const member = await this.users.findLiveInOrganization(p.organizationId, userId, tx);
      if (!member) throw memberNotFound(userId);
      assertMayHandleRole(p, member.role);
      if (member.role === 'owner' && owners.length <= 1) throw new DomainError('conflict', 'the last owner cannot be removed', { reason: 'last_owner' });
      await this.users.softDelete(userId, tx);
      await this.audit.record(tx, p.organizationId, ctx, { action: 'member.remove', target: { type: 'member', id: userId } });
    });
    await this.announcer.announce({ kind: 'user', id: userId });
  }

  /** A password-reset link for a member, shown once to the caller (and mailed with SMTP_URL). */
  async resetLink(p: Principal, ctx: AuditContext, userId: string): Promise<PasswordResetLinkResponse> {
    const token = linkToken('gwr_');
    const expiresAt = new Date(Date.now() + this.config.PASSWORD_RESET_TTL_MINUTES * 60_000);
    const member = await this.db.transaction(async (tx) => {
      const found = await this.users.findLiveInOrganization(p.organizationId, userId, tx);
      if (!found) throw memberNotFound(userId);
      // resetting someone's password takes their account: only for those one may act on
      assertMayHandleRole(p, found.role);
      await this.resets.create({ id: newId('pwr'), userId, tokenHash: sha256Hex(token), expiresAt }, tx);
      await this.audit.record(tx, p.organizationId, ctx, { action: 'member.reset-password', target: { type: 'member', id: userId } });
      return found;
    });
    const url = this.link('reset-password', token);
    await this.mailer.send({ to: member.email, subject: 'Set a new password', intro: 'Someone in your organization asked for a new password for your account. Choose one here:', url, expiresAt });
    return { token, url, expiresAt: expiresAt.toISOString() };
  }

  /** Public: the token of a reset link sets a new password once; every login JWT of that user ends. */
  async resetPassword(token: string, newPassword: string, ctx: AuditContext): Promise<void> {
    const passwordHash = await hashPassword(newPassword);
    const user = await this.db.transaction(async (tx) => {
      const userId = await this.resets.consume(sha256Hex(token), tx);
      if (!userId) throw badLink();
      const row = await this.users.findById(userId, tx);
      if (!row || row.deletedAt || (await this.users.setPassword(userId, passwordHash, tx)) === null) throw badLink();
      await this.audit.record(tx, row.organizationId, { ...ctx, actor: { type: 'user', id: row.id, name: row.email } }, {
        action: 'auth.password-reset',
        target: { type: 'member', id: row.id },
        changes: ['password'],
      });
      return row;
    });
    await this.announcer.announce({ kind: 'user', id: user.id });
  }

  /** The caller's own password: every other login JWT of the user ends; the answer carries a fresh one. */
  async changeOwnPassword(p: Principal, ctx: AuditContext, currentPassword: string, newPassword: string): Promise<LoginToken> {
    if (p.kind !== 'user') throw new DomainError('forbidden', 'only a person has a password; an API key cannot change one', { reason: 'not_a_user' });
    const user = await this.users.findLiveInOrganization(p.organizationId, p.id);
    if (!user) throw new DomainError('unauthorized', 'missing or invalid credentials');
    if (!(await verifyPassword(currentPassword, user.passwordHash))) {
      // recorded as refused by the audit interceptor
      throw new DomainError('forbidden', 'the current password is wrong', { reason: 'wrong_password' });
    }
    const passwordHash = await hashPassword(newPassword);
    const version = await this.db.transaction(async (tx) => {
      const v = await this.users.setPassword(p.id, passwordHash, tx);
      if (v === null) throw new DomainError('unauthorized', 'missing or invalid credentials');
      await this.audit.record(tx, p.organizationId, ctx, { action: 'auth.password', target: { type: 'member', id: p.id }, changes: ['password'] });
      return v;
    });
    await this.announcer.announce({ kind: 'user', id: p.id });
    return this.auth.issueToken({ ...user, tokenVersion: version });
  }

  async invite(p: Principal, ctx: AuditContext, email: string, role: Role): Promise<CreatedInvitationResponse> {
    assertMayHandleRole(p, role);
    const address = email.toLowerCase();
    if (await this.users.emailTaken(address)) throw new DomainError('conflict', 'a user with this email exists', { reason: 'email_taken' });
    const token = linkToken('gwi_');
    const now = new Date();
    const invitation = { id: newId('inv'), organizationId: p.organizationId, email: address, role, expiresAt: new Date(now.getTime() + this.config.INVITATION_TTL_HOURS * 3_600_000), createdBy: `${p.kind}:${p.id}`, createdAt: now };
    await this.db.transaction(async (tx) => {
      await this.invitations.create({ ...invitation, tokenHash: sha256Hex(token) }, tx);
      await this.audit.record(tx, p.organizationId, ctx, { action: 'invitation.create', target: { type: 'invitation', id: invitation.id }, changes: ['email', 'role'] });
    });
    const url = this.link('accept-invitation', token);
    await this.mailer.send({ to: address, subject: 'You are invited', intro: `${p.name} invites you to join their organization as ${role}. Accept here:`, url, expiresAt: invitation.expiresAt });
    return { ...toInvitationView(invitation), token, url };
  }

  async listInvitations(organizationId: string): Promise<InvitationResponse[]> {
    return (await this.invitations.listPending(organizationId)).map(toInvitationView);
  }

  async withdrawInvitation(p: Principal, ctx: AuditContext, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const withdrawn = await this.invitations.withdraw(p.organizationId, id, tx);
      if (!withdrawn) throw new DomainError('not_found', 'invitation not found', { id });
      await this.audit.record(tx, p.organizationId, ctx, { action: 'invitation.withdraw', target: { type: 'invitation', id } });
    });
  }

  /** Public: an invitation's token creates the member once and logs it in. */
  async acceptInvitation(token: string, password: string, name: string | undefined, ctx: AuditContext): Promise<LoginToken> {
    const passwordHash = await hashPassword(password);
    const user = await this.db.transaction(async (tx) => {
      const invitation = await this.invitations.consume(sha256Hex(token), tx);
      if (!invitation) throw badLink();
      if (await this.users.emailTaken(invitation.email, tx)) throw new DomainError('conflict', 'a user with this email exists', { reason: 'email_taken' });
      const created = await this.users.create(
        { id: newId('usr'), organizationId: invitation.organizationId, email: invitation.email, passwordHash, role: invitation.role, createdAt: new Date(), deletedAt: null, name: name ?? null, lastLoginAt: new Date(), tokenVersion: 0 },
        tx,
      );
      await this.audit.record(tx, invitation.organizationId, { ...ctx, actor: actorOf({ kind: 'user', id: created.id, name: created.email }) }, {
        action: 'invitation.accept',
        target: { type: 'invitation', id: invitation.id },
      });
      return created;
    });
    return this.auth.issueToken(user);
  }

  private link(page: 'accept-invitation' | 'reset-password', token: string): string {
    return `${this.config.PUBLIC_URL.replace(/\/+$/, '')}/dashboard/${page}?token=${encodeURIComponent(token)}`;
  }
}

const toInvitationView = (i: { id: string; email: string; role: Role; expiresAt: Date; createdAt: Date }): InvitationResponse => ({
  id: i.id,
  email: i.email,
  role: i.role,
  expiresAt: i.expiresAt.toISOString(),
  createdAt: i.createdAt.toISOString(),
});
