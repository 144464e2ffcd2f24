export const RETRY_POLICIES = ['exponential', 'linear', 'constant'] as const;
export type RetryPolicyKind = (typeof RETRY_POLICIES)[number];

export interface RetryPolicy {
  policy: RetryPolicyKind;
  delaySeconds: number;
  attempts: number;
}

export const RETRY_POLICY_DEFAULTS: RetryPolicy = { policy: 'exponential', delaySeconds: 2, attempts: 15 };
export const RETRY_BOUNDS = { delaySeconds: { min: 1, max: 3600 }, attempts: { min: 1, max: 30 } } as const;

/** What every destination's view shows (a webhook, an event sink), beside its kind's own fields; never a secret. */
export interface DestinationViewFields {
  id: string;
  organizationId: string;
  events: string[];
  sessionId: string | null;
  active: boolean;
  retryPolicy: RetryPolicy;
  /** optional cap on deliveries per second to the destination; null: no cap */
  rateLimitPerSecond: number | null;
  /** epoch ms when the dispatchers disabled the destination after it kept failing; null unless so disabled */
  disabledAt: number | null;
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The seed's 2.3 field list, plus the delivery controls of issue 23 (additive); never a secret. */
export interface WebhookView extends DestinationViewFields {
  url: string;
  customHeaders: Record<string, string>;
}

export const RATE_LIMIT_BOUNDS = { min: 1, max: 10_000 } as const;

/** Payload of `webhook.disabled`: the dispatchers switched a webhook off after it failed continuously. */
export interface WebhookDisabledPayload {
  webhookId: string;
  url: string;
  reason: string;
  /** epoch ms of the first failure after the last success */
  failingSince: number;
  /** epoch ms */
  disabledAt: number;
}

/**
 * Delay before attempt n+1 after attempt n failed (n starts at 1), in ms.
 * exponential: d·2^(n-1), linear: d·n, constant: d.
 */
export function retryDelayMs(policy: RetryPolicy, failedAttempt: number): number {
  const base = policy.delaySeconds * 1000;
  switch (policy.policy) {
    case 'exponential':
      return base * 2 ** (failedAttempt - 1);
    case 'linear':
      return base * failedAttempt;
    case 'constant':
      return base;
  }
}

export const DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Header names of seed 4.7; customHeaders can never override these or Content-Type. */
export const WEBHOOK_HEADERS = {
  requestId: 'X-Webhook-Request-Id',
  timestamp: 'X-Webhook-Timestamp',
  hmac: 'X-Webhook-Hmac',
  hmacAlgorithm: 'X-Webhook-Hmac-Algorithm',
} as const;

/**
 * Headers a customHeaders entry may not name (hop-by-hop / framing / protocol): the HTTP client refuses or
 * mishandles each, so every delivery would fail. Any `Proxy-*` name is refused too. `Content-Encoding` would tell the
 * receiver the plain JSON body is compressed (it fails to decode it, or the HMAC is checked over other bytes);
 * `Date` would contradict the moment the delivery is made, which receivers check against X-Webhook-Timestamp.
 */
export const FORBIDDEN_CUSTOM_HEADERS = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'expect',
  'upgrade',
  'keep-alive',
  'te',
  'trailer',
  'content-encoding',
  'date',
];

/**
 * The most customHeaders may add to a delivery's header block, counted as on the wire (`Name: value\r\n` each).
 * Node's HTTP server refuses header blocks above 16 KiB (431), nginx a header line above 8 KiB, Apache a field above
 * 8190 bytes: 8 KiB of custom headers plus the protocol's own (~300 bytes) stays under all three.
 */
export const MAX_CUSTOM_HEADERS_BYTES = 8192;
export const FORBIDDEN_CUSTOM_HEADER_PREFIXES = ['proxy-'];

/**
 * BullMQ queue of delivery attempts (under the deployment's Redis prefix). One job per attempt, with
 * the deterministic id `deliveryJobId(deliveryId, attemptNo)`; the data carries ids only, never a
 * body or a secret. PostgreSQL's `deliveries` row is the record; a job is only the trigger.
 */
export const DELIVERY_QUEUE = 'webhook-deliveries';
export const DELIVER_JOB = 'deliver';

export interface DeliverJobData {
  deliveryId: string;
  /** 1-based over the delivery's whole life (replays continue the numbering). */
  attemptNo: number;
}

export const deliveryJobId = (deliveryId: string, attemptNo: number) => `${deliveryId}-${attemptNo}`;

/** Delivery log item (GET /webhooks/{id}/deliveries); timestamps in epoch ms. */
export interface DeliveryView {
  id: string;
  webhookId: string;
  eventId: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  deliveredAt: number | null;
  nextAttemptAt: number | null;
}

export interface DeliveryAttemptView {
  attemptNo: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseSnippet: string | null;
  startedAt: number;
}

export interface DeliveryDetailView extends DeliveryView {
  attemptList: DeliveryAttemptView[];
}

/**
 * Options of every delivery job. BullMQ's own retries only cover infrastructure errors of the
 * dispatcher (PostgreSQL unreachable …); HTTP failures are retried per the webhook's retryPolicy
 * with a new job per attempt. Finished jobs are removed: the record is in PostgreSQL.
 */
export const DELIVERY_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential' as const, delay: 1000 },
  removeOnComplete: true,
  removeOnFail: true,
};
