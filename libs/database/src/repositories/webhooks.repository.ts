import { Injectable } from '@nestjs/common';
import type { DestinationKind, RetryPolicy, SinkTarget } from '@app/contracts';
import { Webhook } from '../entities/webhook.entity';
import { Db, EntityReader, EntityTable, type Queryable, type Tx, preparedStatement } from '../pg';
import { auditEntryValues, foldAuditEntry, type PendingAuditEntry } from './audit-log.repository';
import { keysetPage, PageRequest, RowPage } from './keyset-page';
import type { OwnedSession } from './sessions.repository';

/**
 * What a dispatcher routes by. Read as stored, without defaults: a row written by hand or by an older
 * version may lack headers or parts of its policy, and the reader decides what they mean.
 */
export type WebhookRoutingRow = Omit<Webhook, 'createdAt' | 'updatedAt' | 'customHeaders' | 'retryPolicy' | 'disabledReason'> & {
  customHeaders: Record<string, string> | null;
  retryPolicy: Partial<RetryPolicy> | null;
};

interface WebhookRoutingColumns {
  id: string;
  organization_id: string;
  url: string;
  events: string[];
  session_id: string | null;
  active: boolean;
  custom_headers: Record<string, string> | null;
  retry_policy: Partial<RetryPolicy> | null;
  secret_encrypted: string | null;
  rate_limit_per_second: number | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  kind: DestinationKind;
  target: SinkTarget | null;
}

const SELECT_ROUTING = `SELECT id, organization_id, url, events, session_id, active, custom_headers, retry_policy, secret_encrypted,
                              rate_limit_per_second, failing_since, disabled_at, kind, target FROM webhooks`;

/** Everything a PATCH of a destination may change (not its kind, organization or creation), in one statement. */
const UPDATE_SETTINGS_SQL = `UPDATE webhooks SET url = $3, events = $4, session_id = $5, active = $6, custom_headers = $7::jsonb, retry_policy = $8::jsonb,
         secret_encrypted = $9, rate_limit_per_second = $10, failing_since = $11, disabled_at = $12, disabled_reason = $13, target = $14::jsonb,
         updated_at = now()
   WHERE id = $1 AND organization_id = $2 RETURNING updated_at`;
const UPDATE_SETTINGS = preparedStatement('webhook_update_settings', UPDATE_SETTINGS_SQL);
const UPDATE_SETTINGS_AUDITED = preparedStatement('webhook_update_settings_audited', foldAuditEntry(UPDATE_SETTINGS_SQL, 14));

/** A webhook the dispatchers just disabled: what its `webhook.disabled` event says. */
export interface DisabledWebhook {
  id: string;
  organizationId: string;
  url: string;
  failingSince: Date;
  disabledAt: Date;
}

/**
 * The two families the API manages apart over one table: `/webhooks` (kind `http`) and `/event-sinks` (the broker
 * kinds). A row of the other family is not found through either.
 */
export type DestinationFamily = 'webhook' | 'sink' | 'chatwoot';
const FAMILY_KINDS: Record<DestinationFamily, DestinationKind[]> = { webhook: ['http'], sink: ['amqp', 'nats'], chatwoot: ['chatwoot'] };

/** The API's hot read of a webhook: a prepared statement mapped from the entity's metadata, no query builder. */
const WEBHOOKS = new EntityTable(Webhook);
const FIND_IN_ORGANIZATION: Record<DestinationFamily, EntityReader<Webhook>> = {
  webhook: new EntityReader(Webhook, 'webhooks_find_in_organization', `id = $1 AND organization_id = $2 AND kind = 'http'`),
  sink: new EntityReader(Webhook, 'event_sinks_find_in_organization', `id = $1 AND organization_id = $2 AND kind IN ('amqp', 'nats')`),
  chatwoot: new EntityReader(Webhook, 'chatwoot_find_in_organization', `id = $1 AND organization_id = $2 AND kind = 'chatwoot'`),
};

const toRoutingRow = (r: WebhookRoutingColumns): WebhookRoutingRow => ({
  id: r.id,
  organizationId: r.organization_id,
  url: r.url,
  events: r.events,
  sessionId: r.session_id,
  active: r.active,
  customHeaders: r.custom_headers,
  retryPolicy: r.retry_policy,
  secretEncrypted: r.secret_encrypted,
  rateLimitPerSecond: r.rate_limit_per_second,
  failingSince: r.failing_since,
  disabledAt: r.disabled_at,
  kind: r.kind,
  target: r.target ?? {},
});

@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: Db) {}

  /**
   * The organization's webhooks failing now: their receiver has failed since its last success (`failing_since`, set by
   * the dispatchers) or the breaker switched them off (`disabled_at`); longest failing first.
   */
  async failingOf(organizationId: string): Promise<Array<{ id: string; url: string; failingSince: number | null; disabledAt: number | null; disabledReason: string | null }>> {
    const rows = await this.db.query<{ id: string; url: string; failing_since: Date | null; disabled_at: Date | null; disabled_reason: string | null }>(
      `SELECT id, url, failing_since, disabled_at, disabled_reason FROM webhooks
        WHERE organization_id = $1 AND (failing_since IS NOT NULL OR disabled_at IS NOT NULL)
        ORDER BY COALESCE(failing_since, disabled_at), id`,
      [organizationId],
    );
    return rows.map((r) => ({ id: r.id, url: r.url, failingSince: r.failing_since?.getTime() ?? null, disabledAt: r.disabled_at?.getTime() ?? null, disabledReason: r.disabled_reason }));
  }

  /** Inserts a new webhook or writes every field of a loaded one back. */
  async save(webhook: Webhook, manager: Queryable = this.db): Promise<Webhook> {
    return WEBHOOKS.insert(manager, webhook, 'id');
  }

  /**
   * Writes a destination's settings as the caller changed them; `audit`: its entry, written by the same statement
   * (foldAuditEntry), so the change and the entry need no transaction of their own. Null when the row is gone.
   */
  async updateSettings(w: Webhook, audit: PendingAuditEntry | null): Promise<Webhook | null> {
    const values: unknown[] = [
      w.id,
      w.organizationId,
      w.url,
      w.events,
      w.sessionId,
      w.active,
      JSON.stringify(w.customHeaders),
      JSON.stringify(w.retryPolicy),
      w.secretEncrypted,
      w.rateLimitPerSecond,
      w.failingSince,
      w.disabledAt,
      w.disabledReason,
      JSON.stringify(w.target),
    ];
    const rows = await this.db.prepared<{ updated_at: Date }>(audit ? UPDATE_SETTINGS_AUDITED : UPDATE_SETTINGS, audit ? [...values, ...auditEntryValues(audit)] : values);
    return rows[0] ? Object.assign(w, { updatedAt: rows[0].updated_at }) : null;
  }

  async countInOrganization(organizationId: string, manager: Queryable = this.db): Promise<number> {
    const [row] = await manager.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE organization_id = $1', [organizationId]);
    return row.n;
  }

  /** Another organization's webhook (or one of the other family) is not found. One prepared statement, no query builder. */
  async findInOrganization(organizationId: string, id: string, family: DestinationFamily = 'webhook'): Promise<Webhook | null> {
    return FIND_IN_ORGANIZATION[family].findOne(this.db, [id, organizationId]);
  }

  /** `sessionIds`: only the destinations of these sessions (a session-scoped key's view); null: all. */
  async page(organizationId: string, page: PageRequest, family: DestinationFamily = 'webhook', sessionIds: readonly string[] | null = null): Promise<RowPage<Webhook>> {
    const kinds = [...FAMILY_KINDS[family]];
    return sessionIds
      ? keysetPage(this.db, WEBHOOKS, 'organization_id = $1 AND kind = ANY($2::text[]) AND session_id = ANY($3::text[])', [organizationId, kinds, [...sessionIds]], page)
      : keysetPage(this.db, WEBHOOKS, 'organization_id = $1 AND kind = ANY($2::text[])', [organizationId, kinds], page);
  }

  /** False when the organization has no such webhook (of that family). */
  async deleteInOrganization(organizationId: string, id: string, family: DestinationFamily = 'webhook', manager?: Tx): Promise<boolean> {
    const deleted = await (manager ?? this.db).affected('DELETE FROM webhooks WHERE id = $1 AND organization_id = $2 AND kind = ANY($3::text[])', [id, organizationId, [...FAMILY_KINDS[family]]]);
    return deleted > 0;
  }

  /** A session's Chatwoot integration (at most one per session), or null. */
  async chatwootOfSession(session: OwnedSession): Promise<Webhook | null> {
    return WEBHOOKS.selectOne(this.db, `organization_id = $1 AND session_id = $2 AND kind = 'chatwoot'`, [session.organizationId, session.id]);
  }

  /** A Chatwoot integration by id, whatever its organization: Chatwoot's webhook call names it, its secret proves it. */
  async chatwootById(id: string): Promise<Webhook | null> {
    return WEBHOOKS.selectOne(this.db, `id = $1 AND kind = 'chatwoot'`, [id]);
  }

  async allRouting(): Promise<WebhookRoutingRow[]> {
    const rows = await this.db.query<WebhookRoutingColumns>(SELECT_ROUTING);
    return rows.map(toRoutingRow);
  }

  async routingById(id: string): Promise<WebhookRoutingRow | null> {
    const rows = await this.db.query<WebhookRoutingColumns>(`${SELECT_ROUTING} WHERE id = $1`, [id]);
    return rows[0] ? toRoutingRow(rows[0]) : null;
  }

  /**
   * The receiver failed after a success (as far as this dispatcher knows): `failing_since` is set unless another
   * replica set it first. Returns the stored value (the earliest), or null when the webhook is gone.
   */
  async markFailing(id: string, sinceMs: number): Promise<Date | null> {
    const rows = await this.db.query<{ failing_since: Date }>(
      `UPDATE webhooks SET failing_since = COALESCE(failing_since, to_timestamp($2::float8 / 1000)) WHERE id = $1 RETURNING failing_since`,
      [id, sinceMs],
    );
    return rows[0]?.failing_since ?? null;
  }

  /** The receiver answered 2xx: it is not failing (any more). */
  async clearFailing(id: string): Promise<void> {
    await this.db.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [id]);
  }

  /**
   * Switches the webhook off when it is active and has been failing for at least `failingForMs` (the stored
   * `failing_since` decides, so every replica agrees); null when it was not (a success cleared it, someone else
   * disabled it first, a user switched it off).
   */
  async disableIfFailing(id: string, failingForMs: number, reason: string, manager: Queryable = this.db): Promise<DisabledWebhook | null> {
    const rows = await manager.query<{ id: string; organization_id: string; url: string; failing_since: Date; disabled_at: Date }>(
      `UPDATE webhooks SET active = false, disabled_at = now(), disabled_reason = $3, updated_at = now()
        WHERE id = $1 AND active AND failing_since <= now() - make_interval(secs => $2::float8 / 1000)
       RETURNING id, organization_id, url, failing_since, disabled_at`,
      [id, failingForMs, reason],
    );
    const r = rows[0];
    return r ? { id: r.id, organizationId: r.organization_id, url: r.url, failingSince: r.failing_since, disabledAt: r.disabled_at } : null;
  }
}
