import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiConfig } from '@app/config';
import { API_KEY_PREFIX } from '@app/contracts';
import { sha256Hex } from '@app/crypto';
import { RequestRateLimits } from '@app/redis';
import { requestToken } from '../auth/access-token';
import { AuthService } from '../auth/auth.service';
import { LimitMetrics, RateLimitName } from './limit-metrics';
import { rateLimited } from './rate-limited';

const MINUTE_MS = 60_000;

/**
 * Per-IP and per-credential request limits on the whole API, counted in Redis so they hold across replicas. It runs
 * before the auth guard and touches no database: a credential is named by its token's hash (an API key) or by the
 * verified JWT's subject (a user, whichever of their tokens), so a refused request costs two Redis calls at most.
 * A token that does not verify only counts against its IP; the guard then refuses it.
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
    const checks: Array<Promise<{ name: RateLimitName; decision: Awaited<ReturnType<RequestRateLimits['hit']>> }>> = [
      this.check('ip', req.ip ?? 'unknown', this.config.RATE_LIMIT_IP_PER_MIN),
    ];
    const credential = this.credentialOf(req.headers);
    if (credential) checks.push(this.check('credential', credential, this.config.RATE_LIMIT_CREDENTIAL_PER_MIN));
    let refusal: { name: RateLimitName; retryAfterMs: number } | null = null;
    for (const { name, decision } of await Promise.all(checks)) {
      if (!decision.accepted && (!refusal || decision.retryAfterMs > refusal.retryAfterMs)) refusal = { name, retryAfterMs: decision.retryAfterMs };
    }
    if (!refusal) return next();
    this.metrics.refusals.inc({ limit: refusal.name });
    next(rateLimited(refusal.name, refusal.retryAfterMs));
  }

  private async check(name: RateLimitName, subject: string, perMinute: number) {
    return { name, decision: await this.limits.hit(name, subject, { limit: perMinute, windowMs: MINUTE_MS }) };
  }

  private credentialOf(headers: Request['headers']): string | null {
    const token = requestToken(headers);
    if (!token) return null;
    if (token.startsWith(API_KEY_PREFIX)) return `key:${sha256Hex(token)}`;
    // the guard's own verifier: one set of JWT rules, and its prepared key
    const claims = this.auth.jwtClaims(token);
    return claims ? `user:${claims.sub}` : null;
  }
}
