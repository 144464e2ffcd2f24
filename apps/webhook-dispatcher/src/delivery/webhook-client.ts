import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Agent, buildConnector, request } from 'undici';
import { forbiddenAddressReason, unbracket } from '@app/net-guard';

/** A target the SSRF guard refused; the attempt fails with this message. */
export class TargetRefusedError extends Error {
  readonly code = 'ETARGETREFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

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
}

const SNIPPET_BYTES = 4096;
/** Past this much answer body the socket is dropped instead of drained for reuse. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The HTTP side of delivery: undici with keep-alive pools per receiver, a hard timeout, no redirects,
 * and the SSRF guard in the connector, where the address actually dialled is known, so a DNS answer
 * that changes between validation and connect (rebinding) cannot slip through.
 */
export class WebhookClient {
  private readonly agent: Agent;

  constructor(private readonly options: WebhookClientOptions) {
    const guard = !options.allowPrivateTargets;
    const guardedLookup = (hostname: string, opts: LookupOptions, callback: LookupCallback) => {
      dnsLookup(hostname, { ...opts, all: true }, (err, addresses) => {
        if (err) return callback(err, opts.all ? [] : '', undefined);
        const list = addresses as LookupAddress[];
        if (guard) {
          // any forbidden answer refuses the name: a rebinding server mixes public and private answers
          for (const a of list) {
            const reason = forbiddenAddressReason(a.address);
            if (reason) return callback(new TargetRefusedError(reason), opts.all ? [] : '', undefined);
          }
        }
        if (opts.all) return callback(null, list);
        return callback(null, list[0].address, list[0].family);
      });
    };
    const connector = buildConnector({
      timeout: options.timeoutMs,
      ca: options.ca ? [...rootCertificates, options.ca] : undefined,
      lookup: guardedLookup as never,
    });
    this.agent = new Agent({
      connect: (opts, callback) => {
        const host = unbracket(opts.hostname);
        // net.connect skips lookup for IP literals, so a literal is checked here
        if (guard && isIP(host)) {
          const reason = forbiddenAddressReason(host);
          if (reason) return callback(new TargetRefusedError(reason), null);
        }
        connector(opts, callback);
      },
      keepAliveTimeout: 30_000,
      connections: options.connectionsPerOrigin ?? 128,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    } as Agent.Options);
  }

  async post(url: string, headers: Record<string, string>, body: Buffer): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const res = await request(url, {
        dispatcher: this.agent,
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const snippet = await readSnippet(res.body);
      const retryAfter = res.headers['retry-after'];
      return {
        statusCode: res.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
        snippet,
        error: res.statusCode >= 200 && res.statusCode < 300 ? null : `receiver answered ${res.statusCode}`,
        refused: false,
        durationMs: elapsed(),
      };
    } catch (err) {
      const refusal = err instanceof TargetRefusedError ? err : (err as { cause?: unknown })?.cause;
      if (refusal instanceof TargetRefusedError) {
        return { statusCode: null, retryAfter: null, snippet: null, error: refusal.message, refused: true, durationMs: elapsed() };
      }
      return { statusCode: null, retryAfter: null, snippet: null, error: describeError(err), refused: false, durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy());
  }
}

async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (kept < SNIPPET_BYTES) {
      chunks.push(chunk.subarray(0, SNIPPET_BYTES - kept));
      kept += Math.min(chunk.length, SNIPPET_BYTES - kept);
    }
    if (seen > DRAIN_LIMIT_BYTES) {
      body.destroy();
      break;
    }
  }
  if (kept === 0) return null;
  // a multi-byte character cut at the limit decodes as U+FFFD, which is fine for a log snippet
  // PostgreSQL text cannot hold NUL
  return Buffer.concat(chunks).toString('utf8').replace(/\u0000/g, '');
}

function describeError(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; cause?: { message?: string; code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  const cause = e?.cause;
  const message = cause?.message && cause.message !== e?.message ? `${e?.message}: ${cause.message}` : (e?.message ?? String(err));
  const code = e?.code ?? cause?.code;
  return code && !message.includes(code) ? `${code} ${message}` : message;
}
