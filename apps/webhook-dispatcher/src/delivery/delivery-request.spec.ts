import { createHmac } from 'node:crypto';
import type { EventEnvelope } from '@app/contracts';
import { deliveryHeaders, envelopeBody } from './delivery-request';

const envelope: EventEnvelope = {
  payload: { text: 'hé' },
  timestamp: 1700000000000,
  sessionId: 'ses_1',
  organizationId: 'org_1',
  event: 'message.received',
  id: 'evt_1',
};

describe('envelopeBody', () => {
  it('serializes the envelope in its documented field order, whatever order the object had', () => {
    expect(envelopeBody(envelope).toString()).toBe(
      '{"id":"evt_1","event":"message.received","organizationId":"org_1","sessionId":"ses_1","timestamp":1700000000000,"payload":{"text":"hé"}}',
    );
  });
});

describe('deliveryHeaders', () => {
  const body = envelopeBody(envelope);

  it('signs the exact body bytes with HMAC-SHA512 (lowercase hex) when a secret is set', () => {
    const h = deliveryHeaders({ eventId: 'evt_1', body, secret: 's3cret', customHeaders: {}, now: 42 });
    expect(h['X-Webhook-Hmac']).toBe(createHmac('sha512', 's3cret').update(body).digest('hex'));
    expect(h['X-Webhook-Hmac']).toMatch(/^[0-9a-f]{128}$/);
    expect(h['X-Webhook-Hmac-Algorithm']).toBe('sha512');
    expect(h['X-Webhook-Request-Id']).toBe('evt_1');
    expect(h['X-Webhook-Timestamp']).toBe('42');
    expect(h['content-type']).toBe('application/json');
  });

  it('sends no signature headers without a secret', () => {
    const h = deliveryHeaders({ eventId: 'evt_1', body, secret: null, customHeaders: {}, now: 42 });
    expect(Object.keys(h).map((k) => k.toLowerCase())).not.toContain('x-webhook-hmac');
    expect(Object.keys(h).map((k) => k.toLowerCase())).not.toContain('x-webhook-hmac-algorithm');
  });

  it('adds custom headers but never lets them override protocol or framing headers, in any case', () => {
    const h = deliveryHeaders({
      eventId: 'evt_1',
      body,
      secret: 'k',
      now: 42,
      customHeaders: {
        Authorization: 'Bearer abc',
        'X-Tenant': 't1',
        'content-TYPE': 'text/plain',
        'x-webhook-request-id': 'forged',
        'X-WEBHOOK-HMAC': 'forged',
        'X-Webhook-Timestamp': '1',
        'X-Webhook-Extra': 'forged',
        Host: 'evil.test',
        'Content-Length': '1',
        'X-Split': 'a\r\nInjected: 1',
      },
    });
    const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    expect(lower.authorization).toBe('Bearer abc');
    expect(lower['x-tenant']).toBe('t1');
    expect(lower['content-type']).toBe('application/json');
    expect(lower['x-webhook-request-id']).toBe('evt_1');
    expect(lower['x-webhook-timestamp']).toBe('42');
    expect(lower['x-webhook-hmac']).toBe(createHmac('sha512', 'k').update(body).digest('hex'));
    expect(lower['x-webhook-extra']).toBeUndefined();
    expect(lower.host).toBeUndefined();
    expect(lower['content-length']).toBeUndefined();
    expect(lower['x-split']).toBeUndefined();
    // exactly one entry per header name, whatever case the custom header used
    expect(new Set(Object.keys(lower)).size).toBe(Object.keys(h).length);
  });
});
