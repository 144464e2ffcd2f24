import { Agent } from 'undici';
import { guardedConnector, targetRefusalOf } from '@app/net-guard';

export interface WebhookClientOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /** extra trusted CA bundle (PEM), added to the system roots */
  ca?: string;
  /** sockets kept per receiver origin */
  connectionsPerOrigin?: number;
}

export interface PostResult {
  statusCode: number | null;
  retryAfter: string | null;
  /** first 4 KiB of the answer, as text */
  snippet: string | null;
  error: string | null;
  refused: boolean;
  durationMs: number;
  /** a broker confirmed the message (AMQP publisher confirm, JetStream ack); HTTP success is a 2xx statusCode */
  confirmed?: boolean;
}

const SNIPPET_BYTES = 4096;
/** Past this much answer body the socket is dropped instead of drained for reuse. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * The HTTP side of delivery: undici with keep-alive pools per receiver, a hard timeout, no redirects,
 * and the SSRF guard in the connector, where the address actually dialled is known, so a DNS answer
 * that changes between validation and connect (rebinding) cannot slip through.
 */
export class WebhookClient {
  private readonly agent: Agent;
  private readonly targets = new Map<string, { origin: string; path: string }>();
  private readonly inflight = new Set<Flight>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: WebhookClientOptions) {
    this.agent = new Agent({
      connect: guardedConnector(options),
      keepAliveTimeout: 30_000,
      // the whole request is bounded by the sweeper; these bound each phase
      connections: options.connectionsPerOrigin ?? 128,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    } as Agent.Options);
    this.sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(1000, Math.floor(options.timeoutMs / 10))));
    this.sweeper.unref();
  }

  async post(url: string, headers: Record<string, string>, body: Buffer): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: { origin: string; path: string };
    try {
      target = this.target(url);
    } catch (err) {
      return { statusCode: null, retryAfter: null, snippet: null, error: describeError(err), refused: false, durationMs: elapsed() };
    }
    const answer = await new Promise<{ statusCode: number; retryAfter: string | null; snippet: string | null } | { error: unknown }>((resolve) => {
      const flight: Flight = new Flight(Date.now() + this.options.timeoutMs, (answer) => {
        this.inflight.delete(flight);
        resolve(answer);
      });
      this.inflight.add(flight);
      this.agent.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers, body }, flight);
    });
    if ('error' in answer) {
      const err = answer.error;
      const refusal = targetRefusalOf(err);
      if (refusal) {
        return { statusCode: null, retryAfter: null, snippet: null, error: refusal.message, refused: true, durationMs: elapsed() };
      }
      return { statusCode: null, retryAfter: null, snippet: null, error: describeError(err), refused: false, durationMs: elapsed() };
    }
    return {
      statusCode: answer.statusCode,
      retryAfter: answer.retryAfter,
      snippet: answer.snippet,
      error: answer.statusCode >= 200 && answer.statusCode < 300 ? null : `receiver answered ${answer.statusCode}`,
      refused: false,
      durationMs: elapsed(),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.agent.close().catch(() => this.agent.destroy());
  }

  /** Parsed once per webhook URL, not once per POST. */
  private target(url: string): { origin: string; path: string } {
    let target = this.targets.get(url);
    if (!target) {
      const u = new URL(url);
      target = { origin: u.origin, path: `${u.pathname}${u.search}` };
      if (this.targets.size >= 10_000) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  /** One timer for every request in flight instead of one per request: aborts whatever ran past its deadline. */
  private sweep(): void {
    const now = Date.now();
    for (const flight of this.inflight) if (flight.deadline <= now) flight.timeOut();
  }
}

const TIMED_OUT = Object.assign(new Error('timed out'), { name: 'TimeoutError' });

/**
 * One POST, as an undici dispatch handler: keeps the first 4 KiB of the answer and the Retry-After
 * header, without the stream and header object a `request()` builds for every response.
 */
class Flight {
  settled = false;
  private abort: ((err: Error) => void) | null = null;
  private timedOut = false;
  private statusCode = 0;
  private retryAfter: string | null = null;
  private chunks: Buffer[] = [];
  private kept = 0;
  private seen = 0;

  constructor(
    readonly deadline: number,
    private readonly done: (answer: { statusCode: number; retryAfter: string | null; snippet: string | null } | { error: unknown }) => void,
  ) {}

  timeOut(): void {
    if (this.timedOut) return;
    this.timedOut = true;
    if (this.abort) this.abort(TIMED_OUT);
  }

  onConnect(abort: (err: Error) => void): void {
    this.abort = abort;
    if (this.timedOut) abort(TIMED_OUT);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.statusCode = statusCode;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i];
      if (name.length === 11 && name.toString('latin1').toLowerCase() === 'retry-after') {
        this.retryAfter = rawHeaders[i + 1].toString('latin1');
        break;
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.seen += chunk.length;
    if (this.kept < SNIPPET_BYTES) {
      const part = chunk.subarray(0, SNIPPET_BYTES - this.kept);
      this.chunks.push(part);
      this.kept += part.length;
    }
    // past this much the answer is not worth draining for socket reuse
    if (this.seen > DRAIN_LIMIT_BYTES && this.abort) {
      this.finish();
      this.abort(new Error('answer too long'));
    }
    return true;
  }

  onComplete(): void {
    this.finish();
  }

  onError(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.done({ error: err });
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    // a multi-byte character cut at the limit decodes as U+FFFD, which is fine for a log snippet;
    // PostgreSQL text cannot hold NUL
    // eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL text cannot store, so it is dropped
    const snippet = this.kept === 0 ? null : (this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)).toString('utf8').replace(/\u0000/g, '');
    this.done({ statusCode: this.statusCode, retryAfter: this.retryAfter, snippet });
  }
}

function describeError(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; cause?: { message?: string; code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  const cause = e?.cause;
  const message = cause?.message && cause.message !== e?.message ? `${e?.message}: ${cause.message}` : (e?.message ?? String(err));
  const code = e?.code ?? cause?.code;
  return code && !message.includes(code) ? `${code} ${message}` : message;
}
