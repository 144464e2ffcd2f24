import type { DeliveryDetailView, DeliveryView, EventEnvelope, GroupView, MessageView, SessionView, WebhookView } from '@app/contracts';

export type { DeliveryDetailView, DeliveryView, EventEnvelope, GroupView, MessageView, SessionView, WebhookView };

export const API_BASE = '/api/v1';
const TOKEN_KEY = 'gw.token';

/** The login JWT or a pasted API key; per tab (sessionStorage), so closing the tab logs out. */
export const credentials = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** The API's `{error:{code,message,details}}` envelope as a thrown error. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** One readable line, per-field validation messages included. */
  describe(): string {
    const fields = this.details.fields as Record<string, string[]> | undefined;
    if (!fields) return this.message;
    return `${this.message}: ${Object.entries(fields).map(([f, msgs]) => `${f} ${msgs.join(', ')}`).join('; ')}`;
  }
}

let onUnauthorized: () => void = () => undefined;
/** What a 401 does (the app goes back to the login screen). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

async function call<T>(method: string, path: string, body?: unknown, accept = 'application/json'): Promise<T> {
  const headers: Record<string, string> = { Accept: accept };
  const token = credentials.get();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(API_BASE + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 401) {
    credentials.clear();
    onUnauthorized();
  }
  if (!res.ok) {
    const envelope = await res.json().catch(() => null);
    const err = envelope?.error;
    throw new ApiError(res.status, err?.code ?? 'http_error', err?.message ?? `HTTP ${res.status}`, err?.details ?? {});
  }
  if (res.status === 204) return undefined as T;
  if (accept !== 'application/json') return (await res.blob()) as T;
  return (await res.json()) as T;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Me {
  kind: 'user' | 'apiKey';
  id: string;
  organizationId: string;
  role: string | null;
  capabilities: string[];
}

export interface Gateway {
  id: string;
  alive: boolean;
  sessionCount: number;
  capacity: number;
  engine: string;
  version: string;
  startedAt: number;
  lastHeartbeatAt: number;
}

export type WebhookInput = Partial<Pick<WebhookView, 'url' | 'events' | 'sessionId' | 'active' | 'customHeaders' | 'retryPolicy'>> & {
  secret?: string | null;
};

const enc = encodeURIComponent;

export const api = {
  login: (email: string, password: string) => call<{ accessToken: string }>('POST', '/auth/login', { email, password }),
  me: () => call<Me>('GET', '/auth/me'),

  sessions: () => call<Page<SessionView>>('GET', '/sessions?limit=100'),
  session: (id: string) => call<SessionView>('GET', `/sessions/${enc(id)}`),
  createSession: (label: string) => call<SessionView>('POST', '/sessions', { label }),
  sessionAction: (id: string, action: 'start' | 'stop' | 'restart' | 'logout') => call<SessionView>('POST', `/sessions/${enc(id)}:${action}`),
  deleteSession: (id: string) => call<void>('DELETE', `/sessions/${enc(id)}`),
  qrImage: (id: string) => call<Blob>('GET', `/sessions/${enc(id)}/qr`, undefined, 'image/png'),
  requestCode: (id: string, phoneNumber: string) => call<{ code: string }>('POST', `/sessions/${enc(id)}:request-code`, { phoneNumber }),
  groups: (id: string) => call<Page<GroupView>>('GET', `/sessions/${enc(id)}/groups?limit=100`),
  createGroup: (id: string, name: string, participants: string[]) => call<GroupView>('POST', `/sessions/${enc(id)}/groups`, { name, participants }),
  messages: (id: string) => call<Page<MessageView>>('GET', `/sessions/${enc(id)}/messages?limit=20`),
  sendText: (id: string, to: string, text: string) => call<MessageView>('POST', `/sessions/${enc(id)}/messages`, { to, type: 'text', text }),

  webhooks: () => call<Page<WebhookView>>('GET', '/webhooks?limit=100'),
  webhook: (id: string) => call<WebhookView>('GET', `/webhooks/${enc(id)}`),
  createWebhook: (input: WebhookInput) => call<WebhookView>('POST', '/webhooks', input),
  updateWebhook: (id: string, input: WebhookInput) => call<WebhookView>('PATCH', `/webhooks/${enc(id)}`, input),
  deleteWebhook: (id: string) => call<void>('DELETE', `/webhooks/${enc(id)}`),
  testWebhook: (id: string) => call<{ eventId: string; deliveryId: string }>('POST', `/webhooks/${enc(id)}:test`),
  deliveries: (id: string) => call<Page<DeliveryView>>('GET', `/webhooks/${enc(id)}/deliveries?limit=100`),
  delivery: (id: string, deliveryId: string) => call<DeliveryDetailView>('GET', `/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}`),
  replay: (id: string, deliveryId: string) => call<DeliveryView>('POST', `/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}:replay`),

  gateways: () => call<{ data: Gateway[] }>('GET', '/gateways'),
};
