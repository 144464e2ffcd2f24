import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { DomainError } from '@app/contracts';
import type { RequestLimit, RequestLimitsHit, RequestRateLimits } from '@app/redis';
import type { LimitMetrics, RateLimitName } from './limit-metrics';

const deferredOf = new WeakMap<object, DeferredRequestLimits>();

/**
 * The API-wide limits of a request that RateLimitMiddleware did not count at once: a plain send by a credential the
 * guard accepts from memory, whose limits are counted by the send's own Redis round trip (SendRateLimiter's script)
 * instead of one of their own. Whoever handles the request counts them exactly once: the send's script (`take`),
 * a path that does not reach it (`count`, before its work: a refusal is the middleware's 429), or, when the request
 * failed before any of them (refused by the guard, failed before its handler), the error filter as it answers
 * (`settle`). Every answer but an error goes through the send's handler, which takes or counts them; no listener
 * per request (with a `close` listener on every response, bench:messages measured more API CPU per send).
 */
export class DeferredRequestLimits {
  private pending = true;

  private constructor(
    private readonly limits: readonly RequestLimit[],
    private readonly counter: RequestRateLimits,
    private readonly metrics: LimitMetrics,
  ) {}

  /** Attaches the limits to the request, for its handler (or the error filter) to count. */
  static defer(req: object, limits: readonly RequestLimit[], counter: RequestRateLimits, metrics: LimitMetrics): DeferredRequestLimits {
    const deferred = new DeferredRequestLimits(limits, counter, metrics);
    deferredOf.set(req, deferred);
    return deferred;
  }

  /** The request's deferred limits, or null when the middleware counted them already. */
  static of(req: object): DeferredRequestLimits | null {
    return deferredOf.get(req) ?? null;
  }

  /**
   * The limits for a script that counts them in its own round trip (RequestRateLimits.prepare), or null when they
   * were counted already. From here on they are that script's to count, whatever its outcome: a failed round trip
   * is the request's 503, not a reason to count them twice.
   */
  take(): RequestLimitsHit | null {
    if (!this.pending) return null;
    this.pending = false;
    return this.counter.prepare(this.limits);
  }

  /** Counts them now, as the middleware would have: a refusal throws its 429 (nothing counted). */
  async count(): Promise<void> {
    if (!this.pending) return;
    this.pending = false;
    const decision = await this.counter.hitAll(this.limits);
    if (!decision.accepted) throw this.refused(decision);
  }

  /** The middleware's 429 for a refusal by one of the limits (same envelope, Retry-After and metric). */
  refused(refusal: { name: string; retryAfterMs: number }): DomainError {
    return this.metrics.refused(refusal.name as RateLimitName, refusal.retryAfterMs);
  }

  /**
   * The request is answered with an error and nothing counted its limits: counted now where they still have room
   * (the answer is given, it cannot be a 429 any more). The paths that get here (a guard that changed its mind since
   * the middleware looked, a failure before the handler) are rare and cost no query.
   */
  settle(): void {
    if (!this.pending) return;
    this.pending = false;
    this.counter.hitAll(this.limits).catch(() => undefined);
  }
}

/** The handler's DeferredRequestLimits (null when the middleware counted the request at once). */
export const DeferredLimits = createParamDecorator((_: unknown, ctx: ExecutionContext): DeferredRequestLimits | null =>
  DeferredRequestLimits.of(ctx.switchToHttp().getRequest()),
);
