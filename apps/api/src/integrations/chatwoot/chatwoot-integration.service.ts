import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { CHATWOOT_EVENTS, ChatwootIntegrationView, chatwootWebhookUrl, ChatwootSettings, DomainError, RETRY_POLICY_DEFAULTS } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { ChatwootIntegrationState, ChatwootRepository, Db, newId, type OwnedSession, SessionsRepository, type Tx, Webhook, WebhooksRepository } from '@app/database';
import type { AuditContext } from '../../audit/audit-context';
import { AuditTrail } from '../../audit/audit-trail';
import { reachesSession, type Principal } from '../../common/principal';
import { DestinationTargetPolicy } from '../../destinations/destination-target.policy';
import { Destinations } from '../../destinations/destinations';
import { OrganizationQuotas } from '../../limits/organization-quotas';
import { PutChatwootDto } from './dto/chatwoot.dto';

const notFound = () => new DomainError('not_found', 'session not found');
const invalid = (fields: Record<string, string[]>) => new DomainError('validation_error', 'request is invalid', { fields });
/** How a token is shown: never whole. */
const maskToken = (token: string) => `***${token.length > 8 ? token.slice(-4) : ''}`;
/** Chatwoot is retried for a day with the webhook defaults' growth, capped: a long outage loses nothing within it. */
const CHATWOOT_RETRY = { ...RETRY_POLICY_DEFAULTS, policy: 'exponential' as const, delaySeconds: 2, attempts: 20 };

/** The integration as the webhooks table and its own table hold it. */
interface Integration {
  row: Webhook;
  state: ChatwootIntegrationState;
}

/**
 * A session's Chatwoot inbox (CONTRACT 16). The integration is a `chatwoot` destination in the webhooks table, so the
 * dispatchers deliver the session's messages to Chatwoot with the retries, breaker and delivery log of every
 * destination; its API access token is kept encrypted as a webhook's secret is, and its own secret (the one Chatwoot's
 * webhook calls carry) encrypted in chatwoot_integrations.
 */
@Injectable()
export class ChatwootIntegrationService {
  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhooksRepository,
    private readonly chatwoot: ChatwootRepository,
    private readonly sessions: SessionsRepository,
    private readonly destinations: Destinations,
    private readonly targets: DestinationTargetPolicy,
    private readonly box: SecretBox,
    private readonly quotas: OrganizationQuotas,
    private readonly audit: AuditTrail,
    private readonly config: ApiConfig,
  ) {}

  async put(caller: Principal, ctx: AuditContext, sessionId: string, body: PutChatwootDto): Promise<ChatwootIntegrationView> {
    const session = await this.ownSession(caller, sessionId);
    const existing = await this.webhooks.chatwootOfSession(session);
    const baseUrl = this.checkedBaseUrl(body.baseUrl);
    await this.targets.assertAllowed(baseUrl, 'baseUrl');
    const token = body.apiAccessToken !== undefined && !body.apiAccessToken.startsWith('***') ? body.apiAccessToken : null;
    const missing: Record<string, string[]> = {};
    if (!existing && token === null) missing.apiAccessToken = ['apiAccessToken is required when connecting Chatwoot'];
    if (Object.keys(missing).length) throw invalid(missing);
    const before = existing?.target.chatwoot;
    const settings = settingsOf(body, before);
    const row = integrationRow(existing, { organizationId: caller.organizationId, sessionId, baseUrl, settings, active: body.active });
    if (token !== null) row.secretEncrypted = this.box.encrypt(token);
    const secret = existing ? null : randomBytes(24).toString('base64url');
    const changes = Object.keys(body).filter((k) => (body as unknown as Record<string, unknown>)[k] !== undefined);
    const write = async (tx: Tx) => {
      const saved = await this.webhooks.save(row, tx);
      await this.chatwoot.saveState(row.id, secret ? this.box.encrypt(secret) : '', settings.importDays > 0 ? 'pending' : 'none', tx);
      // without an inbox, the dispatcher creates one (the API calls no Chatwoot, decision 77): its name and its
      // webhook, which carries the integration's secret (encrypted as the secret is)
      if (settings.inboxId === null) {
        const inboundSecret = secret ?? this.box.decrypt((await this.chatwoot.stateOf(row.id))!.inboundSecretEncrypted);
        await this.chatwoot.saveInboxRequest(row.id, `WhatsApp ${session.label}`, this.box.encrypt(chatwootWebhookUrl(this.config.PUBLIC_URL, row.id, inboundSecret)), !!existing && (existing.url !== baseUrl || before?.accountId !== settings.accountId), tx);
      }
      await this.audit.record(tx, caller.organizationId, ctx, { action: existing ? 'chatwoot.update' : 'chatwoot.connect', target: { type: 'session', id: sessionId }, changes });
      return saved;
    };
    if (existing) await this.db.transaction(write);
    // an integration is a destination: it counts against the organization's webhook quota as sinks do
    else await this.quotas.admit(caller.organizationId, 'webhooks', (tx) => this.webhooks.countInOrganization(caller.organizationId, tx), write);
    await this.destinations.announce(row.id);
    return this.get(caller, sessionId);
  }

  async get(caller: Principal, sessionId: string): Promise<ChatwootIntegrationView> {
    const { row, state } = await this.find(caller, sessionId);
    return this.view(row, state);
  }

  async remove(caller: Principal, ctx: AuditContext, sessionId: string): Promise<void> {
    const { row } = await this.find(caller, sessionId);
    await this.db.transaction(async (tx) => {
      await this.webhooks.deleteInOrganization(caller.organizationId, row.id, 'chatwoot', tx);
      await this.audit.record(tx, caller.organizationId, ctx, { action: 'chatwoot.disconnect', target: { type: 'session', id: sessionId }, changes: [] });
    });
    await this.destinations.announce(row.id);
  }

  /** The integration a Chatwoot webhook call names, once its secret matches (401 otherwise, whether or not the id exists). */
  async authenticate(integrationId: string, secret: string | undefined): Promise<Webhook> {
    const refuse = () => new DomainError('unauthorized', 'missing or wrong integration secret');
    if (!secret || !/^cwt_[0-9A-Za-z]+$/.test(integrationId)) throw refuse();
    const [row, state] = await Promise.all([this.webhooks.chatwootById(integrationId), this.chatwoot.stateOf(integrationId)]);
    if (!row || !state?.inboundSecretEncrypted) throw refuse();
    const expected = Buffer.from(this.box.decrypt(state.inboundSecretEncrypted));
    const given = Buffer.from(secret);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw refuse();
    return row;
  }

  /** The integration of a session the caller reaches; 404 for another organization's session or none connected. */
  private async find(caller: Principal, sessionId: string): Promise<Integration> {
    const row = await this.webhooks.chatwootOfSession(await this.ownSession(caller, sessionId));
    const state = row ? await this.chatwoot.stateOf(row.id) : null;
    if (!row || !state) throw new DomainError('not_found', 'the session has no Chatwoot integration');
    return { row, state };
  }

  /** The caller's session, when it reaches it (a session-scoped key) and its organization owns it; 404 otherwise. */
  private async ownSession(caller: Principal, sessionId: string): Promise<OwnedSession> {
    const session = reachesSession(caller, sessionId) ? await this.sessions.findInOrganization(caller.organizationId, sessionId) : null;
    if (!session) throw notFound();
    return session;
  }

  private checkedBaseUrl(raw: string): string {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw invalid({ baseUrl: ['baseUrl must be an absolute http(s) URL'] });
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid({ baseUrl: ['baseUrl must be an absolute http(s) URL'] });
    if (u.username || u.password) throw invalid({ baseUrl: ['baseUrl must not carry credentials; give the token as apiAccessToken'] });
    return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
  }

  private view(row: Webhook, state: ChatwootIntegrationState): ChatwootIntegrationView {
    const s = row.target.chatwoot!;
    const secret = state.inboundSecretEncrypted ? this.box.decrypt(state.inboundSecretEncrypted) : '';
    const token = row.secretEncrypted ? this.box.decrypt(row.secretEncrypted) : '';
    return {
      id: row.id,
      organizationId: row.organizationId,
      sessionId: row.sessionId!,
      baseUrl: row.url,
      accountId: s.accountId,
      inboxId: s.inboxId ?? state.inboxId,
      apiAccessToken: maskToken(token),
      groups: s.groups,
      signMessages: s.signMessages,
      importDays: s.importDays,
      active: row.active,
      webhookUrl: chatwootWebhookUrl(this.config.PUBLIC_URL, row.id, secret),
      importState: state.importState,
      importedMessages: state.importedMessages,
      lastError: state.lastError,
      failingSince: row.failingSince ? row.failingSince.getTime() : null,
      disabledAt: row.disabledAt ? row.disabledAt.getTime() : null,
      createdAt: row.createdAt.getTime(),
      updatedAt: row.updatedAt.getTime(),
    };
  }
}

/** The integration's settings from a PUT: an omitted field keeps what was stored (`before`), else its default. */
function settingsOf(body: PutChatwootDto, before: ChatwootSettings | undefined): ChatwootSettings {
  return {
    accountId: body.accountId,
    // absent: the inbox given before, else none (the dispatcher creates one and stores its id)
    inboxId: body.inboxId ?? before?.inboxId ?? null,
    groups: body.groups ?? before?.groups ?? false,
    signMessages: body.signMessages ?? before?.signMessages ?? false,
    importDays: body.importDays ?? before?.importDays ?? 0,
  };
}

/**
 * The integration's destination row after a PUT: the stored one changed, or a new one. Switched back on, it forgets the
 * breaker's record of failure (a fresh start), as a webhook does.
 */
function integrationRow(
  existing: Webhook | null,
  put: { organizationId: string; sessionId: string; baseUrl: string; settings: ChatwootSettings; active: boolean | undefined },
): Webhook {
  const now = new Date();
  const target = { chatwoot: put.settings };
  if (existing) {
    const active = put.active ?? existing.active;
    const reenabled = active && !existing.active;
    return {
      ...existing,
      url: put.baseUrl,
      target,
      events: [...CHATWOOT_EVENTS],
      active,
      updatedAt: now,
      ...(reenabled ? { disabledAt: null, disabledReason: null, failingSince: null } : {}),
    };
  }
  return {
    id: newId('cwt'),
    organizationId: put.organizationId,
    kind: 'chatwoot',
    url: put.baseUrl,
    target,
    events: [...CHATWOOT_EVENTS],
    sessionId: put.sessionId,
    active: put.active ?? true,
    customHeaders: {},
    retryPolicy: CHATWOOT_RETRY,
    rateLimitPerSecond: null,
    failingSince: null,
    disabledAt: null,
    disabledReason: null,
    secretEncrypted: null,
    createdAt: now,
    updatedAt: now,
  };
}
