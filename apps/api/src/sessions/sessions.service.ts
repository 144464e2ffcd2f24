import { findOwnSession } from './own-session';
import { Inject, Injectable } from '@nestjs/common';
import { CommandMap, CommandName, DomainError, GroupView, maskProxyUrl, SESSION_DEFAULTS, SessionQr, SessionView } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { GroupsRepository, newId, OwnedSession, Session, SessionSettingsPatch, SessionsRepository, Db } from '@app/database';
import { EventPublisher } from '@app/events';
import type { MediaStore } from '@app/media';
import { CommandBus, GatewayDirectory, RedisQrBoard, SessionPlacement } from '@app/fleet';
import { SendRateLimiter } from '@app/messaging';
import { changedFields, type AuditContext } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import type { Principal } from '../common/principal';
import { Page, PageQueryDto, pageRequest, toPage } from '../common/pagination';
import { OrganizationQuotas } from '../limits/organization-quotas';
import type { CreateGroupDto } from './dto/group.dto';
import type { CreateSessionDto, UpdateSessionDto } from './dto/session.dto';
import { SessionProxyPolicy } from './session-proxy.policy';
import { conflictReason, toGroupView, toSessionView } from './session.view';
import { MEDIA_STORE } from '../media/media-tokens';

type SessionCommand = Extract<CommandName, 'session.start' | 'session.restart' | 'session.logout' | 'session.delete'>;

/**
 * Sessions of an organization. The row lives here (PostgreSQL); the socket lives on a gateway node, reached
 * through the CommandBus. Every lookup is scoped to the caller's organization, so another organization's
 * session is simply not found.
 */
@Injectable()
export class SessionsService {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly groups: GroupsRepository,
    private readonly placement: SessionPlacement,
    private readonly directory: GatewayDirectory,
    private readonly bus: CommandBus,
    private readonly events: EventPublisher,
    private readonly qrBoard: RedisQrBoard,
    private readonly quotas: OrganizationQuotas,
    private readonly box: SecretBox,
    @Inject(MEDIA_STORE) private readonly mediaStore: MediaStore | null,
    private readonly sendRates: SendRateLimiter,
    private readonly proxyPolicy: SessionProxyPolicy,
    private readonly audit: AuditTrail,
    private readonly db: Db,
  ) {}

  /** The proxy URL as stored: sealed for the gateway, masked for the view; null (or absent) removes it. */
  private proxyColumns(proxyUrl: string | null | undefined): Pick<SessionSettingsPatch, 'proxyUrlSealed' | 'proxyUrlShown'> {
    if (proxyUrl === undefined) return {};
    if (proxyUrl === null) return { proxyUrlSealed: null, proxyUrlShown: null };
    return { proxyUrlSealed: this.box.encrypt(proxyUrl), proxyUrlShown: maskProxyUrl(proxyUrl) };
  }

  /**
   * Within the organization's quota and fair share of the fleet (403), placed on the live gateway with the most room
   * and started there; no gateway → 503 and nothing is kept.
   */
  async create(principal: Principal, body: CreateSessionDto): Promise<SessionView> {
    const organizationId = principal.organizationId;
    await this.proxyPolicy.assertAllowed(body.proxyUrl);
    const { session, gatewayId } = await this.quotas.admitSession(
      organizationId,
      (tx) => this.sessions.countInOrganization(organizationId, tx),
      (tx) => this.placement.choose(tx),
      async (tx, { gatewayId }) => {
        const now = new Date();
        const row = await this.sessions.create(
          {
            id: newId('ses'),
            organizationId,
            createdByUserId: principal.kind === 'user' ? principal.id : null,
            gatewayId,
            label: body.label,
            status: 'stopped',
            desiredState: 'running',
            phoneNumber: null,
            waJid: null,
            waLid: null,
            isAdminSession: body.isAdminSession ?? SESSION_DEFAULTS.isAdminSession,
            autoRead: body.autoRead ?? SESSION_DEFAULTS.autoRead,
            presenceTyping: body.presenceTyping ?? SESSION_DEFAULTS.presenceTyping,
            ratePerMin: body.ratePerMin ?? SESSION_DEFAULTS.ratePerMin,
            ratePerHour: body.ratePerHour ?? SESSION_DEFAULTS.ratePerHour,
            rejectCalls: body.rejectCalls ?? SESSION_DEFAULTS.rejectCalls,
            createdAt: now,
            updatedAt: now,
            lastConnectedAt: null,
            ...this.proxyColumns(body.proxyUrl),
            syncHistory: body.syncHistory ?? SESSION_DEFAULTS.syncHistory,
            receiveStatus: body.receiveStatus ?? SESSION_DEFAULTS.receiveStatus,
          },
          tx,
        );
        return { session: row, gatewayId };
      },
    );
    try {
      await this.bus.send(gatewayId, 'session.start', { sessionId: session.id });
    } catch (err) {
      await this.sessions.delete(session.id);
      throw err;
    }
    return this.view(principal.organizationId, session.id);
  }

  /** `scope`: a session-scoped key's sessions, the only ones it lists. */
  async list(organizationId: string, query: PageQueryDto, scope: ReadonlySet<string> | null = null): Promise<Page<SessionView>> {
    return toPage(await this.sessions.page(organizationId, pageRequest(query), scope ? [...scope] : null), toSessionView);
  }

  async get(organizationId: string, id: string): Promise<SessionView> {
    return toSessionView(await this.find(organizationId, id));
  }

  async update(organizationId: string, ctx: AuditContext, id: string, body: UpdateSessionDto): Promise<SessionView> {
    const session = await this.find(organizationId, id);
    await this.proxyPolicy.assertAllowed(body.proxyUrl);
    const patch: SessionSettingsPatch = {};
    for (const key of ['label', 'autoRead', 'presenceTyping', 'ratePerMin', 'ratePerHour', 'isAdminSession', 'syncHistory', 'rejectCalls', 'receiveStatus'] as const) {
      if (body[key] !== undefined) (patch as Record<string, unknown>)[key] = body[key];
    }
    Object.assign(patch, this.proxyColumns(body.proxyUrl));
    // the change and its audit entry commit together, or neither does
    await this.db.transaction(async (tx) => {
      await this.sessions.patchSettings(session, patch, tx);
      await this.audit.record(tx, organizationId, ctx, { action: 'session.update', target: { type: 'session', id: session.id }, changes: changedFields(body) });
    });
    // the limiter keeps the rates for sends that do not read the session: the very next send reads the new ones
    if (patch.ratePerMin !== undefined || patch.ratePerHour !== undefined) await this.sendRates.forgetRates(session.id);
    return this.view(organizationId, id);
  }

  /**
   * Stops the socket, unlinks the device, forgets the media kept for it (MEDIA_STORE; a store that fails keeps the row,
   * so a retry deletes both), deletes the row (messages, groups, auth state and `media_blobs` go with it).
   */
  async remove(organizationId: string, id: string): Promise<void> {
    const session = await this.find(organizationId, id);
    await this.command(session, 'session.delete');
    await this.mediaStore?.forgetSession(organizationId, session.id);
    await this.sessions.deleteOwned(session);
  }

  async start(organizationId: string, id: string): Promise<SessionView> {
    await this.command(await this.find(organizationId, id), 'session.start');
    return this.view(organizationId, id);
  }

  async restart(organizationId: string, id: string): Promise<SessionView> {
    await this.command(await this.find(organizationId, id), 'session.restart');
    return this.view(organizationId, id);
  }

  /**
   * A session whose gateway is gone holds no socket, so stopping it is only a matter of recording the wish;
   * any other gateway would have to take it over just to close it.
   */
  async stop(organizationId: string, id: string): Promise<SessionView> {
    const session = await this.find(organizationId, id);
    if (session.gatewayId && (await this.directory.isAlive(session.gatewayId))) {
      await this.bus.send(session.gatewayId, 'session.stop', { sessionId: session.id });
    } else {
      await this.markStoppedHere(session);
    }
    return this.view(organizationId, id);
  }

  /** Idempotent: a logged-out session is returned as it is, without asking any gateway. */
  async logout(organizationId: string, id: string): Promise<SessionView> {
    const session = await this.find(organizationId, id);
    if (session.status !== 'logged_out') await this.command(session, 'session.logout');
    return this.view(organizationId, id);
  }

  async qr(organizationId: string, id: string): Promise<SessionQr> {
    const session = await this.find(organizationId, id);
    // the reason says what to do next: `connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com` is not "wait longer"
    const reason = conflictReason(session);
    const notWaiting = () =>
      new DomainError('conflict', `the session is not waiting for a QR scan (status ${session.status}${reason ? `: ${reason}` : ''})`, {
        status: session.status,
        reason,
      });
    if (session.status !== 'scan_qr_code') throw notWaiting();
    const qr = await this.qrBoard.read(session.id);
    if (!qr) throw notWaiting();
    return qr;
  }

  async requestPairingCode(organizationId: string, id: string, phoneNumber: string): Promise<{ code: string }> {
    const session = await this.find(organizationId, id);
    const gatewayId = await this.liveGatewayOf(session);
    return this.bus.send(gatewayId, 'session.request-code', { sessionId: session.id, phoneNumber: phoneNumber.replace(/^\+/, '') });
  }

  async listGroups(organizationId: string, id: string, query: PageQueryDto): Promise<Page<GroupView>> {
    const session = await this.find(organizationId, id);
    return toPage(await this.groups.pageOfSession(session, pageRequest(query)), toGroupView);
  }

  /** The gateway creates the group on the network, stores it and publishes group.created; we relay its answer. */
  async createGroup(organizationId: string, id: string, body: CreateGroupDto): Promise<GroupView> {
    const session = await this.find(organizationId, id);
    if (session.status !== 'working') {
      throw new DomainError('not_implemented', 'groups can only be created while the session is connected', { status: session.status });
    }
    const gatewayId = await this.liveGatewayOf(session);
    return this.bus.send(gatewayId, 'group.create', { sessionId: session.id, name: body.name, participants: body.participants ?? [] });
  }

  // ---------------------------------------------------------------------------------------------

  private async find(organizationId: string, id: string): Promise<OwnedSession> {
    return findOwnSession(this.sessions, organizationId, id);
  }

  private async view(organizationId: string, id: string): Promise<SessionView> {
    return this.get(organizationId, id);
  }

  /**
   * Lifecycle commands go to the session's gateway; when that gateway's heartbeat has expired, the session is
   * first moved to the live gateway with the most room (it resumes there from its stored auth state).
   */
  private async command<N extends SessionCommand>(session: Session, name: N): Promise<CommandMap[N]['result']> {
    const gatewayId = await this.placeOnLiveGateway(session);
    return this.bus.send(gatewayId, name, { sessionId: session.id } as CommandMap[N]['args']);
  }

  private async placeOnLiveGateway(session: Session): Promise<string> {
    if (session.gatewayId && (await this.directory.isAlive(session.gatewayId))) return session.gatewayId;
    const { gatewayId: target } = await this.placement.choose();
    if (!(await this.sessions.moveToGateway(session.id, session.gatewayId, target))) {
      // another mover (a replica, the fleet supervisor) placed it first: its choice stands, one holder only
      const moved = await this.find(session.organizationId, session.id);
      session.gatewayId = moved.gatewayId;
      return this.placeOnLiveGateway(session);
    }
    session.gatewayId = target;
    return target;
  }

  /** Commands that act on a live socket (pairing code, groups) do not move the session. */
  private async liveGatewayOf(session: Session): Promise<string> {
    if (session.gatewayId && (await this.directory.isAlive(session.gatewayId))) return session.gatewayId;
    throw new DomainError('gateway_unavailable', 'the session’s gateway is not available', { gatewayId: session.gatewayId });
  }

  private async markStoppedHere(session: OwnedSession): Promise<void> {
    await this.sessions.markStopped(session);
    if (session.status !== 'stopped') {
      await this.events.publish({
        event: 'session.status',
        organizationId: session.organizationId,
        sessionId: session.id,
        payload: { status: 'stopped', previousStatus: session.status, reason: 'stop_requested' },
      });
    }
  }
}
