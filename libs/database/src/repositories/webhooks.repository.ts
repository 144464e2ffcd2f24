import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RetryPolicy } from '@app/contracts';
import { Webhook } from '../entities/webhook.entity';
import { EntityReader } from '../prepared';
import { keysetPage, PageRequest, RowPage } from './keyset-page';

/**
 * What a dispatcher routes by. Read as stored, without defaults: a row written by hand or by an older
 * version may lack headers or parts of its policy, and the reader decides what they mean.
 */
export type WebhookRoutingRow = Omit<Webhook, 'createdAt' | 'updatedAt' | 'customHeaders' | 'retryPolicy'> & {
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
}

const SELECT_ROUTING = `SELECT id, organization_id, url, events, session_id, active, custom_headers, retry_policy, secret_encrypted FROM webhooks`;

/** The API's hot read of a webhook: a prepared statement mapped from the entity's metadata, no query builder. */
const FIND_IN_ORGANIZATION = new EntityReader(Webhook, 'webhooks_find_in_organization', 'id = $1 AND organization_id = $2');

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
});

@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get repo() {
    return this.db.getRepository(Webhook);
  }

  /** Inserts a new webhook or writes every field of a loaded one back. */
  async save(webhook: Webhook, manager: EntityManager = this.db.manager): Promise<Webhook> {
    const repo = manager.getRepository(Webhook);
    return repo.save(repo.create(webhook));
  }

  async countInOrganization(organizationId: string, manager: EntityManager = this.db.manager): Promise<number> {
    return manager.getRepository(Webhook).count({ where: { organizationId } });
  }

  /** Another organization's webhook is not found. The API's hot read: one prepared statement, no query builder. */
  async findInOrganization(organizationId: string, id: string): Promise<Webhook | null> {
    return FIND_IN_ORGANIZATION.findOne(this.db, [id, organizationId]);
  }

  async page(organizationId: string, page: PageRequest): Promise<RowPage<Webhook>> {
    return keysetPage(this.repo, { organizationId }, page);
  }

  /** False when the organization has no such webhook. */
  async deleteInOrganization(organizationId: string, id: string): Promise<boolean> {
    const result = await this.repo.delete({ id, organizationId });
    return !!result.affected;
  }

  async allRouting(): Promise<WebhookRoutingRow[]> {
    const rows: WebhookRoutingColumns[] = await this.db.query(SELECT_ROUTING);
    return rows.map(toRoutingRow);
  }

  async routingById(id: string): Promise<WebhookRoutingRow | null> {
    const rows: WebhookRoutingColumns[] = await this.db.query(`${SELECT_ROUTING} WHERE id = $1`, [id]);
    return rows[0] ? toRoutingRow(rows[0]) : null;
  }
}
