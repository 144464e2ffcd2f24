import type { NextFunction, Request, Response } from 'express';
import { timeRequest } from './http-metrics';
import type { RateLimitMiddleware } from '../limits/rate-limit.middleware';
import { inputRefusal } from './input-hardening';

/** Our routes: the API's prefix and the two probes, each with what lies under it, in any case (as the router matches). */
const OURS = /^\/(?:api\/v1|healthz|readyz)(?:\/|$)/i;
/** The probes, with or without the prefix: never rate limited. */
const PROBE = /^(?:\/api\/v1)?\/(?:healthz|readyz)\/?$/i;

/**
 * What every request runs before the routes, as one Express layer (mounted after the body parsers): input hardening
 * (a refusal reaches the error filter and nothing else runs), then, for our routes, the duration metric's mark and
 * the API-wide rate limits (not for the probes). One layer instead of three, two of them through Nest's
 * MiddlewareModule, whose wrappers (four path layers each, a route-exclusion check) ran per request.
 */
export function apiPrelude(rateLimits: RateLimitMiddleware) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const refusal = inputRefusal(req);
    if (refusal) return next(refusal);
    const queryAt = req.originalUrl.indexOf('?');
    const path = queryAt < 0 ? req.originalUrl : req.originalUrl.slice(0, queryAt);
    if (!OURS.test(path)) return next();
    timeRequest(req);
    if (PROBE.test(path)) return next();
    rateLimits.use(req, res, next).catch(next);
  };
}
