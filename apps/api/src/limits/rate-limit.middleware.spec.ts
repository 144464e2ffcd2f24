import type { ArgumentsHost } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { ApiConfig } from '@app/config';
import { DomainError, type Permission } from '@app/contracts';
import type { RequestLimit, RequestLimitDecision, RequestLimitsHit, RequestRateLimits } from '@app/redis';
import type { AuthService } from '../auth/auth.service';
import type { Principal } from '../common/principal';
import { ErrorEnvelopeFilter } from '../common/error.filter';
import { DeferredRequestLimits } from './deferred-request-limits';
import { LimitMetrics } from './limit-metrics';
import { RateLimitMiddleware } from './rate-limit.middleware';

const KNOWN_KEY = 'gwk_known';
const READER_KEY = 'gwk_reader';
const SEND_PATH = '/api/v1/sessions/ses_1/messages';

/** Redis stand-in: what was counted at once (hitAll) and what was handed to a script (prepare). */
class FakeLimits {
  hits: RequestLimit[][] = [];
  prepared: RequestLimit[][] = [];
  refuse: RequestLimitDecision | null = null;
  async hitAll(limits: RequestLimit[]): Promise<RequestLimitDecision> {
    this.hits.push(limits);
    return this.refuse ?? { accepted: true };
  }
  prepare(limits: RequestLimit[]): RequestLimitsHit {
    this.prepared.push(limits);
    return { keys: limits.map((l) => `rate:${l.name}`), args: [], names: limits.map((l) => l.name) };
  }
}

const principal = (permissions: Permission[]): Principal => ({ kind: 'apiKey', id: 'key_1', organizationId: 'org_1', role: null, permissions: new Set(permissions), name: 'key', sessionIds: null, allowedIps: null, expiresAt: null, tokenVersion: 0 });

/** The guard's memory: a key that may send, one that may only read; everything else would need a query. */
const auth = {
  jwtClaims: () => null,
  knownPrincipal: (token: string) => (token === KNOWN_KEY ? principal(['messages:send']) : token === READER_KEY ? principal(['sessions:read']) : null),
} as unknown as AuthService;

describe('RateLimitMiddleware', () => {
  let limits: FakeLimits;
  let refusals: string[];
  let middleware: RateLimitMiddleware;

  beforeEach(() => {
    limits = new FakeLimits();
    refusals = [];
    // the real refusal (429 and counter), over a counter that records
    const metrics = Object.assign(Object.create(LimitMetrics.prototype) as LimitMetrics, { refusals: { inc: ({ limit }: { limit: string }) => refusals.push(limit) } });
    const config = { RATE_LIMIT_IP_PER_MIN: 100, RATE_LIMIT_CREDENTIAL_PER_MIN: 10 } as ApiConfig;
    middleware = new RateLimitMiddleware(config, limits as unknown as RequestRateLimits, metrics, auth);
  });

  /** Runs the middleware on one request; `fail` answers it with an error through the global filter. */
  async function run(method: string, url: string, headers: Record<string, string>) {
    const req = { method, originalUrl: url, ip: '203.0.113.7', headers } as unknown as Request;
    const passed: unknown[] = [];
    await middleware.use(req, {} as Response, (err?: unknown) => passed.push(err));
    // a deferred request goes on at the next turn of the event loop
    await new Promise((resolve) => setImmediate(resolve));
    const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => ({ headersSent: true }) }) } as unknown as ArgumentsHost;
    const fail = () => new ErrorEnvelopeFilter().catch(new DomainError('forbidden', 'no'), host);
    return { req, passed, fail, deferred: DeferredRequestLimits.of(req) };
  }

  it('leaves a plain send by a credential the guard knows to the send, and counts it on an error only if nobody did', async () => {
    const taken = await run('POST', SEND_PATH, { authorization: `Bearer ${KNOWN_KEY}` });
    expect(taken.passed).toEqual([undefined]);
    expect(limits.hits).toHaveLength(0);
    expect(taken.deferred!.take()!.names).toEqual(['ip', 'credential']);
    expect(taken.deferred!.take()).toBeNull();
    taken.fail();
    expect(limits.hits).toHaveLength(0);

    // the guard refused it, or it failed before the send: counted as the error is answered, and once only
    const untaken = await run('POST', `${SEND_PATH}?x=1`, { 'x-api-key': KNOWN_KEY });
    expect(limits.hits).toHaveLength(0);
    untaken.fail();
    untaken.fail();
    expect(limits.hits).toHaveLength(1);
    expect(limits.hits[0].map((l) => l.name)).toEqual(['ip', 'credential']);
    await untaken.deferred!.count();
    expect(limits.hits).toHaveLength(1);
  });

  it('counts a deferred request on another path once, refusing it with the middleware’s own 429 and metric', async () => {
    const { deferred, fail } = await run('POST', SEND_PATH, { authorization: `Bearer ${KNOWN_KEY}` });
    limits.refuse = { accepted: false, retryAfterMs: 1500, name: 'credential' };
    const refused = await deferred!.count().catch((err: unknown) => err);
    const direct = (await run('GET', '/api/v1/sessions', { authorization: `Bearer ${KNOWN_KEY}` })).passed[0];
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).toBody()).toEqual((direct as DomainError).toBody());
    expect(refusals).toEqual(['credential', 'credential']);
    // counted (refused) once: neither a second count nor the error's answer counts it again
    await deferred!.count();
    fail();
    expect(limits.hits).toHaveLength(2);
    expect(limits.prepared).toHaveLength(0);
  });

  it.each([
    ['an unknown key', 'POST', SEND_PATH, { authorization: 'Bearer gwk_unknown' }],
    ['a keyed send', 'POST', SEND_PATH, { authorization: `Bearer ${KNOWN_KEY}`, 'idempotency-key': 'k1' }],
    ['a key that may not send', 'POST', SEND_PATH, { authorization: `Bearer ${READER_KEY}` }],
    ['a bulk send', 'POST', `${SEND_PATH}:batch`, { authorization: `Bearer ${KNOWN_KEY}` }],
    ['a read', 'GET', SEND_PATH, { authorization: `Bearer ${KNOWN_KEY}` }],
    ['no credential', 'POST', SEND_PATH, {}],
  ])('counts %s at once, before the guard', async (_, method, url, headers) => {
    const { deferred, passed } = await run(method, url, headers);
    expect(deferred).toBeNull();
    expect(limits.hits).toHaveLength(1);
    expect(passed).toEqual([undefined]);
  });
});
