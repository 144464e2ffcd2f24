import { Injectable } from '@nestjs/common';
import { WebhookView } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { newId } from '@app/database';
import type { AuditContext } from '../audit/audit-context';
import { Page, PageQueryDto } from '../common/pagination';
import { assertInScope, type DestinationCaller, type DestinationNames, Destinations } from '../destinations/destinations';
import { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook.dto';
import { toWebhookView } from './webhook.view';

const WEBHOOKS: DestinationNames = { family: 'webhook', action: 'webhook', targetType: 'webhook' };

/** HTTPS webhooks (CONTRACT 4): a destination whose own fields are its URL, its custom headers and its signing secret. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly destinations: Destinations,
    private readonly box: SecretBox,
  ) {}

  async create(caller: DestinationCaller, ctx: AuditContext, body: CreateWebhookDto): Promise<WebhookView> {
    assertInScope(caller, body.sessionId ?? null);
    await this.destinations.assertReachable(caller.organizationId, body.url, body.sessionId);
    const fields = {
      id: newId('whk'),
      organizationId: caller.organizationId,
      kind: 'http' as const,
      url: body.url,
      target: {},
      customHeaders: body.customHeaders ?? {},
      secretEncrypted: body.secret ? this.box.encrypt(body.secret) : null,
    };
    return toWebhookView(await this.destinations.create(caller, ctx, WEBHOOKS, fields, body));
  }

  async get(caller: DestinationCaller, id: string): Promise<WebhookView> {
    return toWebhookView(await this.destinations.find(caller, 'webhook', id));
  }

  list(caller: DestinationCaller, query: PageQueryDto): Promise<Page<WebhookView>> {
    return this.destinations.page(caller, 'webhook', query, toWebhookView);
  }

  /** Everything is checked before anything is written: a failed PATCH changes nothing. */
  async update(caller: DestinationCaller, ctx: AuditContext, id: string, body: UpdateWebhookDto): Promise<WebhookView> {
    const webhook = await this.destinations.find(caller, 'webhook', id);
    if (body.sessionId !== undefined) assertInScope(caller, body.sessionId);
    await this.destinations.assertReachable(caller.organizationId, body.url, body.sessionId);
    if (body.url !== undefined) webhook.url = body.url;
    if (body.customHeaders !== undefined) webhook.customHeaders = body.customHeaders;
    if (body.secret !== undefined) webhook.secretEncrypted = body.secret === null ? null : this.box.encrypt(body.secret);
    return toWebhookView(await this.destinations.update(caller, ctx, WEBHOOKS, webhook, body));
  }

  remove(caller: DestinationCaller, ctx: AuditContext, id: string): Promise<void> {
    return this.destinations.remove(caller, ctx, WEBHOOKS, id);
  }
}
