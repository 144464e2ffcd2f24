import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Chatwoot (v4, application API v1 as config/routes.rb and the accounts controllers define it), for
 * the tests of the Chatwoot integration: a real HTTP server that answers the calls an API-channel inbox takes
 * (contacts search and create, contact inboxes, conversations, messages as JSON or multipart with `attachments[]`,
 * inboxes: read one, list them, create an API channel's), with Chatwoot's payload shapes, and that plays Chatwoot's
 * side of agents' replies: it stores the agent's message and POSTs its `message_created` webhook
 * (Message#webhook_data's shape) to the inbox's webhook URL, and can deliver that webhook again. It keeps everything it received, checks the `api_access_token`, and can answer 500 or
 * 429 (with Retry-After) for a while.
 */
export interface StandinContact {
  id: number;
  name: string;
  phone_number: string | null;
  identifier: string | null;
  contact_inboxes: Array<{ inbox_id: number; source_id: string }>;
}

export interface StandinConversation {
  id: number;
  inbox_id: number;
  contact_id: number;
  source_id: string;
}

export interface StandinAttachment {
  id: number;
  file_type: 'image' | 'audio' | 'video' | 'file';
  filename: string;
  mimetype: string;
  size: number;
  sha256: string;
  bytes: Buffer;
}

export interface StandinMessage {
  id: number;
  conversation_id: number;
  content: string;
  message_type: 'incoming' | 'outgoing';
  private: boolean;
  source_id: string | null;
  content_attributes: Record<string, unknown>;
  sender: { id: number; name: string; type: 'user' | 'contact' };
  attachments: StandinAttachment[];
  /** Message#status; set through `PATCH conversations/:id/messages/:id` (API inboxes) */
  status: 'sent' | 'delivered' | 'read' | 'failed';
  /** every status a PATCH set, in order */
  statuses: string[];
}

/** An inbox as Chatwoot's `api/v1/models/_inbox` partial shows an API channel's (the fields the integration reads). */
export interface StandinInbox {
  id: number;
  name: string;
  channel_type: 'Channel::Api';
  webhook_url: string | null;
}

export interface AgentReply {
  content?: string;
  private?: boolean;
  agentName?: string;
  inReplyTo?: number;
  attachments?: Array<{ filename: string; mimetype: string; bytes: Buffer }>;
}

const MESSAGE_TYPE_CODE = { incoming: 0, outgoing: 1 } as const;
const fileTypeOf = (mimetype: string): StandinAttachment['file_type'] =>
  mimetype.startsWith('image/') ? 'image' : mimetype.startsWith('audio/') ? 'audio' : mimetype.startsWith('video/') ? 'video' : 'file';

export class ChatwootStandin {
  readonly accountId = 1;
  readonly inboxId = 7;
  readonly token = 'cw-token-0123456789abcdef';
  url = '';
  /** every request, in order: method, path, whether it was refused by an injected fault */
  readonly requests: Array<{ method: string; path: string; status: number }> = [];
  readonly contacts: StandinContact[] = [];
  readonly conversations: StandinConversation[] = [];
  readonly messages: StandinMessage[] = [];
  /** the inbox's webhook URL (Settings → Inboxes → Configuration), where agents' messages are POSTed */
  webhookUrl: string | null = null;
  /** inboxes created through `POST inboxes` (besides the inbox `inboxId`, made by hand) */
  readonly createdInboxes: StandinInbox[] = [];
  /** the statuses our webhook answered to messages created through the API (echoes) */
  readonly echoes: number[] = [];
  private fault: { status: 500 | 429; retryAfter?: string } | null = null;
  private server: Server | null = null;
  private ids = 100;

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.route(req, res).catch((err: Error) => this.send(res, 500, { error: err.message })));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Every API call is answered `status` until `recover()`; a 429 carries Retry-After. */
  failWith(status: 500 | 429, retryAfter?: string): void {
    this.fault = { status, retryAfter };
  }

  recover(): void {
    this.fault = null;
  }

  /** Requests refused by an injected fault. */
  get refused(): number {
    return this.requests.filter((r) => r.status === 500 || r.status === 429).length;
  }

  messagesOf(conversationId: number): StandinMessage[] {
    return this.messages.filter((m) => m.conversation_id === conversationId);
  }

  conversationOfPhone(phone: string): StandinConversation | undefined {
    const contact = this.contacts.find((c) => c.phone_number === phone);
    return contact ? this.conversations.find((c) => c.contact_id === contact.id) : undefined;
  }

  /** An agent writes in a conversation: the message is stored, and its webhook POSTed (the answer returned). */
  async agentReply(conversationId: number, reply: AgentReply): Promise<{ message: StandinMessage; status: number; body: unknown }> {
    const message: StandinMessage = {
      id: ++this.ids,
      conversation_id: conversationId,
      content: reply.content ?? '',
      message_type: 'outgoing',
      private: reply.private ?? false,
      source_id: null,
      content_attributes: reply.inReplyTo ? { in_reply_to: reply.inReplyTo } : {},
      sender: { id: 3, name: reply.agentName ?? 'Dana Agent', type: 'user' },
      attachments: (reply.attachments ?? []).map((a) => this.attachment(a.filename, a.mimetype, a.bytes)),
      status: 'sent',
      statuses: [],
    };
    this.messages.push(message);
    return { message, ...(await this.deliverWebhook(message)) };
  }

  /** Chatwoot's webhook job runs again for a message (a retry, a redelivery): the same payload, POSTed again. */
  async deliverWebhook(message: StandinMessage): Promise<{ status: number; body: unknown }> {
    if (!this.webhookUrl) throw new Error('the inbox has no webhook URL');
    const res = await fetch(this.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(this.webhookData(message)) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  /** Message#webhook_data for `message_created` (message_type as its name, conversation and inbox embedded). */
  webhookData(m: StandinMessage): Record<string, unknown> {
    const conversation = this.conversations.find((c) => c.id === m.conversation_id)!;
    const contact = this.contacts.find((c) => c.id === conversation.contact_id)!;
    return {
      event: 'message_created',
      id: m.id,
      content: m.content,
      content_type: 'text',
      content_attributes: m.content_attributes,
      created_at: new Date().toISOString(),
      message_type: m.message_type,
      private: m.private,
      source_id: m.source_id,
      sender: m.sender,
      account: { id: this.accountId, name: 'Acme Support' },
      inbox: { id: conversation.inbox_id, name: 'WhatsApp' },
      conversation: {
        id: conversation.id,
        inbox_id: conversation.inbox_id,
        status: 'open',
        contact_inbox: { source_id: conversation.source_id },
        meta: { sender: { id: contact.id, name: contact.name, phone_number: contact.phone_number, identifier: contact.identifier } },
      },
      attachments: m.attachments.map((a) => ({
        id: a.id,
        message_id: m.id,
        file_type: a.file_type,
        account_id: this.accountId,
        extension: a.filename.split('.').pop() ?? null,
        data_url: `${this.url}/rails/active_storage/blobs/${a.id}/${a.filename}`,
        thumb_url: '',
        file_size: a.size,
      })),
    };
  }

  // ------------------------------------------------------------------------------------------------------------------

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin');
    const path = url.pathname;
    const body = await readBody(req);
    const blob = /^\/rails\/active_storage\/blobs\/(\d+)\//.exec(path);
    if (blob && req.method === 'GET') {
      const a = this.messages.flatMap((m) => m.attachments).find((x) => x.id === Number(blob[1]));
      this.requests.push({ method: 'GET', path, status: a ? 200 : 404 });
      if (!a) return this.send(res, 404, { error: 'not found' });
      res.writeHead(200, { 'content-type': a.mimetype, 'content-length': a.bytes.length });
      res.end(a.bytes);
      return;
    }
    const base = `/api/v1/accounts/${this.accountId}`;
    const answer = (status: number, payload: unknown) => {
      this.requests.push({ method: req.method ?? '', path, status });
      this.send(res, status, payload, status === 429 && this.fault?.retryAfter ? { 'retry-after': this.fault.retryAfter } : {});
    };
    if (!path.startsWith(base)) return answer(404, { error: 'Resource could not be found' });
    if (req.headers['api_access_token'] !== this.token) return answer(401, { error: 'You need to sign in or sign up before continuing.' });
    if (this.fault) return answer(this.fault.status, { error: this.fault.status === 429 ? 'Too many requests' : 'Internal Server Error' });
    const rest = path.slice(base.length);
    const json = () => JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    let m: RegExpExecArray | null;

    if (req.method === 'GET' && rest === '/contacts/search') {
      const q = (url.searchParams.get('q') ?? '').toLowerCase();
      const found = this.contacts.filter((c) => [c.name, c.phone_number, c.identifier].some((v) => v && v.toLowerCase().includes(q)));
      return answer(200, { meta: { count: found.length, current_page: 1 }, payload: found });
    }
    if (req.method === 'POST' && rest === '/contacts') {
      const b = json();
      if (b.phone_number && this.contacts.some((c) => c.phone_number === b.phone_number)) return answer(422, { message: 'Phone number has already been taken' });
      if (b.phone_number && !/^\+[1-9]\d{1,14}$/.test(String(b.phone_number))) return answer(422, { message: 'Phone number should be in e164 format' });
      const contact: StandinContact = { id: ++this.ids, name: String(b.name ?? ''), phone_number: (b.phone_number as string) ?? null, identifier: (b.identifier as string) ?? null, contact_inboxes: [] };
      this.contacts.push(contact);
      let contactInbox: { inbox: unknown; source_id: string } | null = null;
      if (b.inbox_id !== undefined) {
        const inboxId = Number(b.inbox_id);
        if (!this.hasInbox(inboxId)) return answer(404, { error: 'Resource could not be found' });
        const sourceId = crypto.randomUUID();
        contact.contact_inboxes.push({ inbox_id: inboxId, source_id: sourceId });
        contactInbox = { inbox: { id: inboxId, channel_type: 'Channel::Api' }, source_id: sourceId };
      }
      return answer(200, { payload: { contact, contact_inbox: contactInbox ?? { inbox: null, source_id: null } } });
    }
    if (req.method === 'PUT' && (m = /^\/contacts\/(\d+)$/.exec(rest))) {
      const contact = this.contacts.find((c) => c.id === Number(m![1]));
      if (!contact) return answer(404, { error: 'Resource could not be found' });
      const b = json();
      if (typeof b.name === 'string') contact.name = b.name;
      return answer(200, { payload: contact });
    }
    if (req.method === 'POST' && (m = /^\/contacts\/(\d+)\/contact_inboxes$/.exec(rest))) {
      const contact = this.contacts.find((c) => c.id === Number(m![1]));
      const b = json();
      const inboxId = Number(b.inbox_id);
      if (!contact || !this.hasInbox(inboxId)) return answer(404, { error: 'Resource could not be found' });
      const existing = contact.contact_inboxes.find((ci) => ci.inbox_id === inboxId);
      const sourceId = existing?.source_id ?? String(b.source_id ?? crypto.randomUUID());
      if (!existing) contact.contact_inboxes.push({ inbox_id: inboxId, source_id: sourceId });
      return answer(200, { source_id: sourceId, inbox: { id: inboxId, channel_type: 'Channel::Api' } });
    }
    if (req.method === 'POST' && rest === '/conversations') {
      const b = json();
      const contact = this.contacts.find((c) => c.id === Number(b.contact_id));
      if (!contact || !contact.contact_inboxes.some((ci) => ci.source_id === b.source_id)) return answer(422, { message: 'Contact inbox not found' });
      const conversation: StandinConversation = { id: ++this.ids, inbox_id: Number(b.inbox_id), contact_id: contact.id, source_id: String(b.source_id) };
      this.conversations.push(conversation);
      return answer(200, { id: conversation.id, account_id: this.accountId, inbox_id: conversation.inbox_id, status: b.status ?? 'open', messages: [] });
    }
    if (req.method === 'POST' && (m = /^\/conversations\/(\d+)\/messages$/.exec(rest))) {
      const conversation = this.conversations.find((c) => c.id === Number(m![1]));
      if (!conversation) return answer(404, { error: 'Resource could not be found' });
      const params = await this.messageParams(req, body);
      if (params.message_type !== 'incoming' && params.message_type !== 'outgoing') return answer(422, { message: 'message_type is invalid' });
      const message: StandinMessage = {
        id: ++this.ids,
        conversation_id: conversation.id,
        content: params.content,
        message_type: params.message_type,
        private: params.private,
        source_id: params.source_id,
        content_attributes: params.content_attributes,
        sender: params.message_type === 'incoming' ? { id: conversation.contact_id, name: 'contact', type: 'contact' } : { id: 1, name: 'api', type: 'user' },
        attachments: params.attachments.map((a) => this.attachment(a.filename, a.mimetype, a.bytes)),
        status: 'sent',
        statuses: [],
      };
      this.messages.push(message);
      // as Chatwoot does, an outgoing message created through the API fires the inbox's webhook too (the echo an
      // integration must recognize as its own)
      if (message.message_type === 'outgoing' && this.webhookUrl) {
        setImmediate(() => void this.deliverWebhook(message).then((a) => this.echoes.push(a.status), () => this.echoes.push(0)));
      }
      return answer(200, {
        id: message.id,
        content: message.content,
        message_type: MESSAGE_TYPE_CODE[message.message_type],
        private: message.private,
        source_id: message.source_id,
        content_attributes: message.content_attributes,
        conversation_id: conversation.id,
        attachments: message.attachments.map((a) => ({ id: a.id, file_type: a.file_type, file_size: a.size })),
      });
    }
    // MessagesController#update (Chatwoot v4.2+): `status` through Messages::StatusUpdateService, API inboxes only
    // (403 otherwise); an unknown status or read → delivered is not applied (still 200)
    if (req.method === 'PATCH' && (m = /^\/conversations\/(\d+)\/messages\/(\d+)$/.exec(rest))) {
      const message = this.messages.find((x) => x.conversation_id === Number(m![1]) && x.id === Number(m![2]));
      if (!message) return answer(404, { error: 'Resource could not be found' });
      const status = String(json().status ?? '');
      if (['sent', 'delivered', 'read', 'failed'].includes(status) && !(message.status === 'read' && status === 'delivered')) {
        message.status = status as StandinMessage['status'];
        message.statuses.push(status);
      }
      return answer(200, { id: message.id, content: message.content, message_type: MESSAGE_TYPE_CODE[message.message_type], status: message.status, conversation_id: message.conversation_id });
    }
    if (req.method === 'GET' && (m = /^\/inboxes\/(\d+)$/.exec(rest))) {
      const inbox = this.allInboxes().find((i) => i.id === Number(m![1]));
      if (!inbox) return answer(404, { error: 'Resource could not be found' });
      return answer(200, inbox);
    }
    // InboxesController#index: `payload`, each inbox as the _inbox partial (an API channel's with its webhook_url)
    if (req.method === 'GET' && rest === '/inboxes') return answer(200, { payload: this.allInboxes() });
    // InboxesController#create: `name` and `channel` {type, webhook_url, …}; an API channel is Channel::Api
    if (req.method === 'POST' && rest === '/inboxes') {
      const b = json();
      const channel = b.channel as { type?: string; webhook_url?: string } | undefined;
      if (!b.name || channel?.type !== 'api') return answer(422, { message: 'Invalid channel type or name' });
      const inbox: StandinInbox = { id: ++this.ids, name: String(b.name), channel_type: 'Channel::Api', webhook_url: channel.webhook_url ?? null };
      this.createdInboxes.push(inbox);
      return answer(200, inbox);
    }
    return answer(404, { error: 'Resource could not be found' });
  }

  private allInboxes(): StandinInbox[] {
    return [{ id: this.inboxId, name: 'WhatsApp', channel_type: 'Channel::Api', webhook_url: this.webhookUrl }, ...this.createdInboxes];
  }

  private hasInbox(id: number): boolean {
    return this.allInboxes().some((i) => i.id === id);
  }

  /** A message's params from JSON or from a multipart form (Rails' bracketed names: content_attributes[in_reply_to]). */
  private async messageParams(req: IncomingMessage, body: Buffer) {
    const type = String(req.headers['content-type'] ?? '');
    if (type.startsWith('multipart/form-data')) {
      const form = await new Request('http://standin/', { method: 'POST', headers: { 'content-type': type }, body }).formData();
      const attachments: Array<{ filename: string; mimetype: string; bytes: Buffer }> = [];
      for (const file of form.getAll('attachments[]')) {
        if (typeof file === 'string') continue;
        attachments.push({ filename: file.name, mimetype: file.type, bytes: Buffer.from(await file.arrayBuffer()) });
      }
      const inReplyTo = form.get('content_attributes[in_reply_to]');
      return {
        content: String(form.get('content') ?? ''),
        message_type: String(form.get('message_type') ?? 'outgoing'),
        private: form.get('private') === 'true',
        source_id: (form.get('source_id') as string | null) ?? null,
        content_attributes: inReplyTo ? { in_reply_to: Number(inReplyTo) } : {},
        attachments,
      };
    }
    const b = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    return {
      content: String(b.content ?? ''),
      message_type: String(b.message_type ?? 'outgoing'),
      private: b.private === true,
      source_id: (b.source_id as string | undefined) ?? null,
      content_attributes: (b.content_attributes as Record<string, unknown> | undefined) ?? {},
      attachments: [] as Array<{ filename: string; mimetype: string; bytes: Buffer }>,
    };
  }

  private attachment(filename: string, mimetype: string, bytes: Buffer): StandinAttachment {
    return { id: ++this.ids, file_type: fileTypeOf(mimetype), filename, mimetype, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), bytes };
  }

  private send(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(payload));
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
