import type { NextFunction, Request, Response } from 'express';
import { DomainError } from '@app/contracts';
import { MetricsRegistry } from '@app/infra';
import { ApiMetrics } from './http-metrics';
import type { RateLimitMiddleware } from '../limits/rate-limit.middleware';
import { apiPrelude } from './api-prelude';

describe('apiPrelude (what runs before the routes)', () => {
  /** Runs the prelude on one GET; says whether it was refused, timed (observed once done) and rate limited. */
  async function run(url: string) {
    const metrics = new ApiMetrics(new MetricsRegistry());
    const limited: string[] = [];
    const rateLimits = { use: async (req: Request, _res: Response, next: NextFunction) => (limited.push(req.originalUrl), next()) } as unknown as RateLimitMiddleware;
    const req = { method: 'GET', originalUrl: url, query: {}, body: undefined } as unknown as Request;
    const passed: unknown[] = [];
    apiPrelude(rateLimits)(req, {} as Response, (err?: unknown) => passed.push(err));
    await new Promise((resolve) => setImmediate(resolve));
    metrics.requestDone(req, { statusCode: 200, writableFinished: true } as never, 0.001);
    const { values } = await metrics.httpDuration.get();
    const timed = values.some((v) => v.metricName?.endsWith('_count') && v.value === 1);
    return { refused: passed.length === 1 && passed[0] instanceof DomainError, passed: passed.length === 1 && passed[0] === undefined, timed, limited: limited.length === 1 };
  }

  it.each([
    // our routes under the prefix, in any case, with a query string: timed and limited
    ['/api/v1', true, true],
    ['/api/v1/', true, true],
    ['/api/v1/webhooks/whk_1?expand=1', true, true],
    ['/API/V1/webhooks', true, true],
    ['/healthz/x', true, true],
    // the probes, with or without the prefix: timed, never limited
    ['/healthz', true, false],
    ['/HEALTHZ/', true, false],
    ['/readyz', true, false],
    ['/api/v1/healthz', true, false],
    ['/api/v1/readyz/', true, false],
    // not ours (the docs, the dashboard, a look-alike prefix): neither
    ['/api/docs', false, false],
    ['/api/v1x', false, false],
    ['/', false, false],
  ])('%s: timed %s, limited %s', async (url, timed, limited) => {
    expect(await run(url)).toEqual({ refused: false, passed: true, timed, limited });
  });

  it('refuses hostile input before anything else: neither timed nor limited', async () => {
    expect(await run('/api/v1/sessions/a%00b')).toEqual({ refused: true, passed: false, timed: false, limited: false });
  });
});
