import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiConfig } from '@app/config';
import { API_KEY_PREFIX } from '@app/contracts';
import { type RequestLimit, RequestRateLimits } from '@app/redis';
import { requestToken, requestTokenHash } from '../auth/access-token';
import { AuthService } from '../auth/auth.service';
import { DeferredRequestLimits } from './deferred-request-limits';
import { LimitMetrics, RateLimitName } from './limit-metrics';

const MINUTE_MS = 60_000;

/** POST to this path is a send (MessagesController.send); the prefix is bootstrap's API_PREFIX. */
const SEND_PATH = /^\/api\/v1\/sessions\/[^/?#]+\/messages\/?(?:\?|$)/;

/**
 * Per-IP and per-credential request limits on the whole API, counted in Redis so they hold across replicas. It runs
 * before the auth guard and touches no database: a credential is named by its token's hash (an API key) or by the
 * verified JWT's subject (a user, whichever of their tokens), so a refused request costs two Redis calls at most.
 * A token that does not verify only counts against its IP; the guard then refuses it.
 *
 * One request is not counted here: a send without an Idempotency-Key by a credential the guard will accept from
 * memory (its principal cached, allowed to send). Its limits go to the send's own round trip (DeferredRequestLimits;
 * SendRateLimiter's script counts them first), so a plain send makes one Redis round trip to be accepted instead of
 * two. An unknown or bad credential is always counted here, before the guard: a brute force is refused 429 as ever.
 */
@Injectable()
export class RateLimitMiddleware implements NestMiddleware {
  constructor(
    private readonly config: ApiConfig,
    private readonly limits: RequestRateLimits,
    private readonly metrics: LimitMetrics,
    private readonly auth: AuthService,
  ) {}

  async use(req: Request, _res: Response, next: NextFunction): Promise<void> {
    const limits: RequestLimit[] = [
      { name: 'ip', subject: req.ip ?? 'unknown', window: { limit: this.config.RATE_LIMIT_IP_PER_MIN, windowMs: MINUTE_MS } },
    ];
    const token = requestToken(req.headers);
    const credential = token ? this.credentialOf(req, token) : null;
    if (credential) limits.push({ name: 'credential', subject: credential, window: { limit: this.config.RATE_LIMIT_CREDENTIAL_PER_MIN, windowMs: MINUTE_MS } });
    if (credential && this.sendsAtOnce(req, token!)) {
      DeferredRequestLimits.defer(req, limits, this.limits, this.metrics);
      // the rest of the request on its own turn, as after the round trip it replaces: calling next() here ran the
      // guard, the handler and validation inside this frame, which cost more API CPU per send (bench:messages)
      setImmediate(next);
      return;
    }
    // one round trip for both; a refused request is counted against neither
    const decision = await this.limits.hitAll(limits);
    if (decision.accepted) return next();
    next(this.metrics.refused(decision.name as RateLimitName, decision.retryAfterMs));
  }

  private credentialOf(req: Request, token: string): string | null {
    if (token.startsWith(API_KEY_PREFIX)) return `key:${requestTokenHash(req, token)}`;
    // the guard's own verifier: one set of JWT rules, and its prepared key
    const claims = this.auth.jwtClaims(token);
    return claims ? `user:${claims.sub}` : null;
  }

  /**
   * A plain send the guard will let through without I/O: its limits can wait for the send's round trip. The
   * permission is the send route's; were it ever to differ, the guard's refusal is still counted (by the error
   * filter), only no longer refusable.
   */
  private sendsAtOnce(req: Request, token: string): boolean {
    if (req.method !== 'POST' || req.headers['idempotency-key'] !== undefined || !SEND_PATH.test(req.originalUrl)) return false;
    const principal = this.auth.knownPrincipal(token, token.startsWith(API_KEY_PREFIX) ? requestTokenHash(req, token) : undefined);
    return principal !== null && principal.permissions.has('messages:send');
  }
}
