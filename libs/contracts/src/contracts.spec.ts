import { DomainError, ERROR_STATUS } from './errors';
import { eventSelected } from './events';
import { retryDelayMs } from './webhooks';

describe('retryDelayMs', () => {
  it('exponential d·2^(n-1), linear d·n, constant d', () => {
    const seq = (policy: 'exponential' | 'linear' | 'constant') => [1, 2, 3, 4].map((n) => retryDelayMs({ policy, delaySeconds: 2, attempts: 15 }, n));
    expect(seq('exponential')).toEqual([2000, 4000, 8000, 16000]);
    expect(seq('linear')).toEqual([2000, 4000, 6000, 8000]);
    expect(seq('constant')).toEqual([2000, 2000, 2000, 2000]);
  });
});

describe('eventSelected', () => {
  it('["*"] is every type, [] none, otherwise exact', () => {
    expect(eventSelected(['*'], 'poll.vote')).toBe(true);
    expect(eventSelected([], 'poll.vote')).toBe(false);
    expect(eventSelected(['message.received'], 'message.received')).toBe(true);
    expect(eventSelected(['message'], 'message.received')).toBe(false);
  });
});

describe('DomainError', () => {
  it('carries the status of its code and the envelope', () => {
    const e = new DomainError('gateway_unavailable', 'no answer', { gatewayId: 'g1' });
    expect(e.status).toBe(503);
    expect(e.toBody()).toEqual({ error: { code: 'gateway_unavailable', message: 'no answer', details: { gatewayId: 'g1' } } });
    expect(ERROR_STATUS.validation_error).toBe(422);
  });
});
