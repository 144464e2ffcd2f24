import { Agent, fetch, FormData } from 'undici';
import { guardedConnector, targetRefusalOf } from '@app/net-guard';

/**
 * Chatwoot's application API (v1, as Chatwoot v4 defines it in config/routes.rb under `api/v1/accounts/:account_id`),
 * the few calls an API-channel inbox needs. Every request goes through the address guard in the connector (as
 * webhooks do): a private Chatwoot is reached only with WEBHOOK_ALLOW_PRIVATE_TARGETS=true. No redirect is followed.
 */
export interface ChatwootAccount {
  baseUrl: string;
  accountId: number;
  token: string;
}

export interface ChatwootContact {
  id: number;
  name: string | null;
  phone_number: string | null;
  identifier: string | null;
}

/** An inbox as Chatwoot's `api/v1/models/_inbox` partial shows it (the fields used). */
export interface ChatwootInbox {
  id: number;
  name: string;
  channel_type: string;
  webhook_url?: string | null;
}

/** Chatwoot answered something else than 2xx, or could not be reached; `status` null for a network failure. */
export class ChatwootCallError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryAfter: string | null,
    readonly snippet: string | null,
    readonly refused = false,
  ) {
    super(message);
  }
}

export interface NewChatwootMessage {
  content: string;
  message_type: 'incoming' | 'outgoing';
  private?: boolean;
  source_id?: string;
  content_attributes?: Record<string, unknown>;
  /** epoch seconds the message was really sent (imported history) */
  external_created_at?: number;
}

export interface ChatwootAttachment {
  bytes: Buffer;
  mimetype: string;
  filename: string;
}

export class ChatwootClient {
  private readonly agent: Agent;

  constructor(private readonly options: { timeoutMs: number; allowPrivateTargets: boolean }) {
    this.agent = new Agent({ connect: guardedConnector(options), headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs } as Agent.Options);
  }

  /** Contacts whose name, phone, email or identifier match `q` (`GET contacts/search`, payload: contact[]). */
  async searchContacts(a: ChatwootAccount, q: string): Promise<ChatwootContact[]> {
    const body = await this.call<{ payload: ChatwootContact[] }>(a, 'GET', `/contacts/search?q=${encodeURIComponent(q)}&include_contacts=true`);
    return body.payload ?? [];
  }

  /** `POST contacts` with `inbox_id`: the contact and its contact inbox (payload.contact, payload.contact_inbox.source_id). */
  async createContact(a: ChatwootAccount, contact: { inbox_id: number; name: string; phone_number?: string; identifier: string }): Promise<{ contact: ChatwootContact; sourceId: string | null }> {
    const body = await this.call<{ payload: { contact: ChatwootContact; contact_inbox?: { source_id: string | null } } }>(a, 'POST', '/contacts', contact);
    return { contact: body.payload.contact, sourceId: body.payload.contact_inbox?.source_id ?? null };
  }

  /** `PUT contacts/:id`: the contact's name, once its push name is known. */
  async renameContact(a: ChatwootAccount, contactId: number, name: string): Promise<void> {
    await this.call(a, 'PUT', `/contacts/${contactId}`, { name });
  }

  /** `POST contacts/:id/contact_inboxes`: the contact in this inbox, with its source id. */
  async createContactInbox(a: ChatwootAccount, contactId: number, inboxId: number, sourceId: string): Promise<string> {
    const body = await this.call<{ source_id: string }>(a, 'POST', `/contacts/${contactId}/contact_inboxes`, { inbox_id: inboxId, source_id: sourceId });
    return body.source_id ?? sourceId;
  }

  /** `POST conversations`: a conversation of the contact in the inbox. */
  async createConversation(a: ChatwootAccount, c: { source_id: string; inbox_id: number; contact_id: number }): Promise<number> {
    const body = await this.call<{ id: number }>(a, 'POST', '/conversations', { ...c, status: 'open' });
    return body.id;
  }

  /** `POST conversations/:id/messages`, JSON, or multipart with `attachments[]` when there is a file. */
  async createMessage(a: ChatwootAccount, conversationId: number, m: NewChatwootMessage, attachment?: ChatwootAttachment): Promise<number> {
    if (!attachment) return (await this.call<{ id: number }>(a, 'POST', `/conversations/${conversationId}/messages`, m)).id;
    const form = new FormData();
    form.set('content', m.content);
    form.set('message_type', m.message_type);
    form.set('private', String(m.private ?? false));
    if (m.source_id) form.set('source_id', m.source_id);
    if (m.external_created_at) form.set('external_created_at', String(m.external_created_at));
    // Rails reads bracketed form names as nested params
    for (const [k, v] of Object.entries(m.content_attributes ?? {})) form.set(`content_attributes[${k}]`, String(v));
    form.append('attachments[]', new Blob([attachment.bytes], { type: attachment.mimetype }), attachment.filename);
    return (await this.call<{ id: number }>(a, 'POST', `/conversations/${conversationId}/messages`, form)).id;
  }

  /**
   * `PATCH conversations/:id/messages/:id` with `status` (`delivered`, `read`; Messages::StatusUpdateService,
   * chatwoot/chatwoot PR #11387 of 2025-04): the ticks of a message of an API-channel inbox (403 for another channel,
   * 404 on a Chatwoot older than that).
   */
  async updateMessageStatus(a: ChatwootAccount, conversationId: number, messageId: number, status: 'delivered' | 'read'): Promise<void> {
    await this.call(a, 'PATCH', `/conversations/${conversationId}/messages/${messageId}`, { status });
  }

  /** `GET inboxes/:id`: the connection works and the inbox exists (an integration's test). */
  async inbox(a: ChatwootAccount, inboxId: number): Promise<{ id: number; name: string; channel_type: string }> {
    return this.call(a, 'GET', `/inboxes/${inboxId}`);
  }

  /** `GET inboxes`: the account's inboxes (payload: inbox[]; an API channel's has its `webhook_url`). */
  async inboxes(a: ChatwootAccount): Promise<ChatwootInbox[]> {
    const body = await this.call<{ payload: ChatwootInbox[] }>(a, 'GET', '/inboxes');
    return body.payload ?? [];
  }

  /** `POST inboxes` with an API channel (`channel: {type: 'api', webhook_url}`): the inbox created. */
  async createApiInbox(a: ChatwootAccount, name: string, webhookUrl: string): Promise<ChatwootInbox> {
    return this.call(a, 'POST', '/inboxes', { name, channel: { type: 'api', webhook_url: webhookUrl } });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async call<T>(a: ChatwootAccount, method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown): Promise<T> {
    const url = `${a.baseUrl.replace(/\/+$/, '')}/api/v1/accounts/${a.accountId}${path}`;
    const headers: Record<string, string> = { api_access_token: a.token, accept: 'application/json' };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    let res: Awaited<ReturnType<typeof fetch>>;
    try {
      res = await fetch(url, { method, headers, body: payload, dispatcher: this.agent, redirect: 'manual', signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (err) {
      const refusal = targetRefusalOf(err) ?? targetRefusalOf((err as { cause?: unknown }).cause);
      if (refusal) throw new ChatwootCallError(refusal.message, null, null, null, true);
      const cause = (err as { cause?: Error }).cause;
      throw new ChatwootCallError(`${method} ${path}: ${cause?.message ?? (err as Error).message}`, null, null, null);
    }
    const text = await res.text();
    if (res.status < 200 || res.status > 299) {
      throw new ChatwootCallError(`Chatwoot answered ${res.status} to ${method} ${path.split('?')[0]}`, res.status, res.headers.get('retry-after'), text.slice(0, 4096));
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ChatwootCallError(`Chatwoot answered ${method} ${path.split('?')[0]} with a body that is not JSON`, res.status, null, text.slice(0, 4096));
    }
  }
}
