import { createHmac, timingSafeEqual } from 'node:crypto';
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

/**
 * A receiver written from the Standard Webhooks spec (standardwebhooks.com, "Verifying webhook authenticity"), not
 * from our signer: the key is the secret's bytes, or the base64 after `whsec_`; the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`; the header holds space-separated `v1,<base64>` entries; a timestamp
 * more than 5 minutes away from the receiver's clock is a replay.
 */
function verifyStandardWebhook(secret: string, headers: Record<string, string>, body: Buffer, nowSeconds: number): boolean {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const id = lower['webhook-id'];
  const timestamp = lower['webhook-timestamp'];
  const signatures = lower['webhook-signature'];
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 5 * 60) return false;
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.split('_')[1], 'base64') : Buffer.from(secret);
  const expected = createHmac('sha256', key).update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body])).digest();
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

describe('Standard Webhooks headers', () => {
  const body = envelopeBody(envelope);
  const sentAtMs = 1_700_000_123_456;
  const sentAtSeconds = 1_700_000_123;

  it('carry the event id, the attempt time in whole seconds, and a signature a spec-written receiver accepts', () => {
    const h = deliveryHeaders({ eventId: 'evt_1', body, secret: 's3cret', customHeaders: {}, now: sentAtMs });
    expect(h['webhook-id']).toBe('evt_1');
    expect(h['webhook-timestamp']).toBe(String(sentAtSeconds));
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyStandardWebhook('s3cret', h, body, sentAtSeconds + 10)).toBe(true);
  });

  it('decode a whsec_ secret as the spec serializes it (base64 key bytes after the prefix)', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const h = deliveryHeaders({ eventId: 'evt_1', body, secret, customHeaders: {}, now: sentAtMs });
    expect(verifyStandardWebhook(secret, h, body, sentAtSeconds)).toBe(true);
    // keyed with the decoded bytes, not the text of the secret
    expect(verifyStandardWebhook(secret.slice('whsec_'.length), h, body, sentAtSeconds)).toBe(false);
  });

  it('are refused by the receiver for a tampered body, a wrong secret, or a replay older than 5 minutes', () => {
    const h = deliveryHeaders({ eventId: 'evt_1', body, secret: 's3cret', customHeaders: {}, now: sentAtMs });
    expect(verifyStandardWebhook('s3cret', h, Buffer.from(body.toString().replace('hé', 'he')), sentAtSeconds)).toBe(false);
    expect(verifyStandardWebhook('other', h, body, sentAtSeconds)).toBe(false);
    expect(verifyStandardWebhook('s3cret', h, body, sentAtSeconds + 301)).toBe(false);
    expect(verifyStandardWebhook('s3cret', { ...h, 'webhook-id': 'evt_2' }, body, sentAtSeconds)).toBe(false);
  });

  it("leave the seed's X-Webhook-* headers exactly as they were", () => {
    const h = deliveryHeaders({ eventId: 'evt_1', body, secret: 's3cret', customHeaders: {}, now: sentAtMs });
    expect(h['X-Webhook-Timestamp']).toBe(String(sentAtMs));
    expect(h['X-Webhook-Hmac']).toBe(createHmac('sha512', 's3cret').update(body).digest('hex'));
    expect(h['X-Webhook-Request-Id']).toBe('evt_1');
  });

  it('have no signature without a secret, and cannot be forged through customHeaders', () => {
    const unsigned = deliveryHeaders({ eventId: 'evt_1', body, secret: null, customHeaders: {}, now: sentAtMs });
    expect(unsigned['webhook-signature']).toBeUndefined();
    expect(unsigned['webhook-id']).toBe('evt_1');
    const forged = deliveryHeaders({
      eventId: 'evt_1',
      body,
      secret: null,
      now: sentAtMs,
      customHeaders: { 'Webhook-Signature': 'v1,forged', 'WEBHOOK-ID': 'x', 'webhook-timestamp': '1' },
    });
    const lower = Object.fromEntries(Object.entries(forged).map(([k, v]) => [k.toLowerCase(), v]));
    expect(lower['webhook-signature']).toBeUndefined();
    expect(lower['webhook-id']).toBe('evt_1');
    expect(lower['webhook-timestamp']).toBe(String(sentAtSeconds));
  });
});
