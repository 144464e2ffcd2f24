/**
 * Event sinks (CONTRACT 15): the broker side of delivery. This folder owns the connections to the brokers users run
 * (RabbitMQ, NATS JetStream) and the one publish each makes per attempt; everything else about a sink's delivery is
 * the webhook pipeline's (fan-out, fair scheduler, breaker, delivery log, retries), reached through the `Destination`
 * seam of `delivery/destinations.ts`.
 */

import { targetRefusalOf } from '@app/net-guard';
import type { DeliveryMessage } from '../delivery/destinations';
import type { PostResult } from '../delivery/webhook-client';

/** A live connection to one sink's broker; `dead` once it closed or failed, so the next attempt opens a new one. */
export interface BrokerLink {
  readonly dead: boolean;
  close(): Promise<void>;
}

const IDLE_CLOSE_MS = 5 * 60_000;

/**
 * One link per sink and URL, opened on the first attempt and shared by every attempt in flight to it; a link that
 * died (the broker went away, a channel error) is replaced by the next attempt, and one unused for five minutes (a
 * sink deleted or given another URL) is closed.
 */
export class LinkPool<L extends BrokerLink> {
  private readonly links = new Map<string, { link: Promise<L>; usedAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly open: (url: string) => Promise<L>) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** The sink's link, opened if it has none alive; rejects when it cannot be opened (the next call tries again). */
  async get(sinkId: string, url: string): Promise<L> {
    const key = `${sinkId}\n${url}`;
    const entry = this.links.get(key);
    if (entry) {
      entry.usedAt = Date.now();
      const link = await entry.link.catch(() => null);
      if (link && !link.dead) return link;
      if (this.links.get(key) === entry) this.links.delete(key);
      return this.get(sinkId, url);
    }
    const link = this.open(url);
    const fresh = { link, usedAt: Date.now() };
    this.links.set(key, fresh);
    link.catch(() => this.links.get(key) === fresh && this.links.delete(key));
    return link;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.links.values()];
    this.links.clear();
    await Promise.allSettled(all.map(async (e) => (await e.link).close()));
  }

  private sweep(): void {
    const before = Date.now() - IDLE_CLOSE_MS;
    for (const [key, entry] of this.links) {
      if (entry.usedAt > before) continue;
      this.links.delete(key);
      void entry.link.then((l) => l.close()).catch(() => undefined);
    }
  }
}

/** A broker error as one log line, with the URL's password (if it was echoed) cut out. */
export function describeBrokerError(err: unknown, url: string): string {
  const e = err as { message?: string; code?: string | number } | null;
  let message = e?.message ?? String(err);
  const code = e?.code;
  if (code !== undefined && !message.includes(String(code))) message = `${code} ${message}`;
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password) message = message.split(password).join('***');
  } catch {
    /* not a URL: nothing to hide */
  }
  return message;
}

/** What a routing key or subject template is filled from. */
export function routeOf(message: DeliveryMessage): { event: string; organizationId: string; sessionId: string | null } {
  return { event: message.eventType, organizationId: message.organizationId, sessionId: message.sessionId };
}

/** Rejects with a timeout error after `ms` unless `work` settles first. */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { name: 'TimeoutError' })), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * One publish as the delivery log records it: confirmed by the broker (`snippet` says how, e.g. the stream and
 * sequence), or failed with the broker's error (password cut out), or refused by the address guard.
 */
export async function brokerOutcome(url: string, publish: () => Promise<string | null>): Promise<PostResult> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  try {
    const snippet = await publish();
    return { statusCode: null, retryAfter: null, snippet, error: null, refused: false, confirmed: true, durationMs: durationMs() };
  } catch (err) {
    const refusal = targetRefusalOf(err);
    return { statusCode: null, retryAfter: null, snippet: null, error: refusal ? refusal.message : describeBrokerError(err, url), refused: !!refusal, durationMs: durationMs() };
  }
}
