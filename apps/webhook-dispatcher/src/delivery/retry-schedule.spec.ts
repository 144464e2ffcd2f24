import { RetryPolicy } from '@app/contracts';
import { nextStep, parseRetryAfter } from './retry-schedule';

const exp: RetryPolicy = { policy: 'exponential', delaySeconds: 2, attempts: 15 };
const lin: RetryPolicy = { policy: 'linear', delaySeconds: 3, attempts: 4 };
const con: RetryPolicy = { policy: 'constant', delaySeconds: 5, attempts: 3 };
const NOW = Date.UTC(2026, 0, 1);

describe('nextStep', () => {
  it('treats 2xx only as delivered', () => {
    expect(nextStep(exp, 1, { statusCode: 200 }, NOW)).toEqual({ kind: 'delivered' });
    expect(nextStep(exp, 1, { statusCode: 204 }, NOW)).toEqual({ kind: 'delivered' });
    expect(nextStep(exp, 1, { statusCode: 301 }, NOW).kind).toBe('retry');
    expect(nextStep(exp, 1, { statusCode: 404 }, NOW).kind).toBe('retry');
    expect(nextStep(exp, 1, { statusCode: null }, NOW).kind).toBe('retry');
  });

  it('follows the seed schedule: exponential 2s, 4s, 8s …', () => {
    expect([1, 2, 3, 4].map((n) => nextStep(exp, n, { statusCode: 500 }, NOW))).toEqual([
      { kind: 'retry', delayMs: 2000 },
      { kind: 'retry', delayMs: 4000 },
      { kind: 'retry', delayMs: 8000 },
      { kind: 'retry', delayMs: 16000 },
    ]);
  });

  it('linear grows by the base delay, constant stays', () => {
    expect([1, 2, 3].map((n) => nextStep(lin, n, { statusCode: 500 }, NOW))).toEqual([
      { kind: 'retry', delayMs: 3000 },
      { kind: 'retry', delayMs: 6000 },
      { kind: 'retry', delayMs: 9000 },
    ]);
    expect([1, 2].map((n) => nextStep(con, n, { statusCode: null }, NOW))).toEqual([
      { kind: 'retry', delayMs: 5000 },
      { kind: 'retry', delayMs: 5000 },
    ]);
  });

  it('is dead after exactly `attempts` tries', () => {
    expect(nextStep(con, 2, { statusCode: 500 }, NOW).kind).toBe('retry');
    expect(nextStep(con, 3, { statusCode: 500 }, NOW)).toEqual({ kind: 'dead' });
    expect(nextStep({ ...con, attempts: 1 }, 1, { statusCode: null }, NOW)).toEqual({ kind: 'dead' });
    // the last try still counts when it succeeds
    expect(nextStep(con, 3, { statusCode: 200 }, NOW)).toEqual({ kind: 'delivered' });
  });

  it('honours Retry-After on 429 and 503, capped at the policy delay', () => {
    expect(nextStep(exp, 3, { statusCode: 429, retryAfter: '1' }, NOW)).toEqual({ kind: 'retry', delayMs: 1000 });
    expect(nextStep(exp, 1, { statusCode: 503, retryAfter: '120' }, NOW)).toEqual({ kind: 'retry', delayMs: 2000 });
    const date = new Date(NOW + 3000).toUTCString();
    expect(nextStep(exp, 3, { statusCode: 503, retryAfter: date }, NOW)).toEqual({ kind: 'retry', delayMs: 3000 });
    // other statuses ignore it; an unreadable value falls back to the policy
    expect(nextStep(exp, 3, { statusCode: 500, retryAfter: '1' }, NOW)).toEqual({ kind: 'retry', delayMs: 8000 });
    expect(nextStep(exp, 3, { statusCode: 429, retryAfter: 'soon' }, NOW)).toEqual({ kind: 'retry', delayMs: 8000 });
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 7 ', NOW)).toBe(7000);
    expect(parseRetryAfter(new Date(NOW + 5000).toUTCString(), NOW)).toBe(5000);
    expect(parseRetryAfter(new Date(NOW - 5000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfter(null, NOW)).toBeNull();
    expect(parseRetryAfter('-3', NOW)).toBeNull();
    expect(parseRetryAfter('1.5', NOW)).toBeNull();
  });
});
