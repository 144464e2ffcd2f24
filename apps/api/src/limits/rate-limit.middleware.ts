import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiConfig } from '@app/config';
import { API_KEY_PREFIX } from '@app/contracts';
import { RequestRateLimits } from '@app/redis';
import { requestToken, requestTokenHash } from '../auth/access-token';
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
    const limits: Array<{ name: RateLimitName; subject: string; window: { limit: number; windowMs: number } }> = [
      { name: 'ip', subject: req.ip ?? 'unknown', window: { limit: this.config.RATE_LIMIT_IP_PER_MIN, windowMs: MINUTE_MS } },
    ];
    const credential = this.credentialOf(req);
    if (credential) limits.push({ name: 'credential', subject: credential, window: { limit: this.config.RATE_LIMIT_CREDENTIAL_PER_MIN, windowMs: MINUTE_MS } });
    // one round trip for both; a refused request is counted against neither
    const decision = await this.limits.hitAll(limits);
    if (decision.accepted) return next();
    const name = decision.name as RateLimitName;
    this.metrics.refusals.inc({ limit: name });
    next(rateLimited(name, decision.retryAfterMs));
  }

  private credentialOf(req: Request): string | null {
    const token = requestToken(req.headers);
    if (!token) return null;
    if (token.startsWith(API_KEY_PREFIX)) return `key:${requestTokenHash(req, token)}`;
    // the guard's own verifier: one set of JWT rules, and its prepared key
    const claims = this.auth.jwtClaims(token);
    return claims ? `user:${claims.sub}` : null;
  }
}
