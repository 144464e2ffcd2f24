import jwt from 'jsonwebtoken';
import { DataSource } from 'typeorm';
import { ApiKey, User } from '@app/database';
import { JWT_AUDIENCE, JWT_ISSUER, signAccessToken } from '../apps/api/src/auth/access-token';
import { startApi } from './support/api-app';
import { announcePrincipalChange } from './support/principals';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource } from './support/seed';

describe('authentication and capabilities', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let org: SeededOrg;
  let db: DataSource;
  const secret = () => process.env.JWT_SECRET!;

  beforeAll(async () => {
    api = await startApi();
    org = await seedOrganization('Auth Co');
    db = await testDataSource();
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  const expect401 = async (headers: Record<string, string>) => {
    const res = await api.http().get('/api/v1/webhooks').set(headers);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String), details: {} } });
  };

  it('logs in with email and password and the JWT works', async () => {
    const owner = org.users.owner;
    const res = await api.http().post('/api/v1/auth/login').send({ email: owner.email.toUpperCase(), password: owner.password });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 3600 });
    const me = await api.http().get('/api/v1/auth/me').set(bearer(res.body.accessToken));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ kind: 'user', id: owner.id, organizationId: org.id, role: 'owner' });
    expect(me.body.capabilities).toContain('webhooks:manage');
  });

  it('refuses a wrong password and an unknown email alike', async () => {
    for (const body of [
      { email: org.users.owner.email, password: 'wrong-password' },
      { email: 'nobody@example.test', password: 'whatever' },
    ]) {
      const res = await api.http().post('/api/v1/auth/login').send(body);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });

  it('401 without a header, with a garbage token, or a non-bearer scheme', async () => {
    await expect401({});
    await expect401(bearer('garbage'));
    await expect401(bearer('gwk_not-a-real-key'));
    await expect401({ Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` });
  });

  it('401 for a JWT signed with another secret', async () => {
    const forged = signAccessToken({ sub: org.users.owner.id, org: org.id, role: 'owner' }, 'another-secret-another-secret-another', 3600);
    await expect401(bearer(forged));
  });

  it('401 for an expired JWT', async () => {
    const expired = jwt.sign({ org: org.id, role: 'owner', exp: Math.floor(Date.now() / 1000) - 60 }, secret(), {
      subject: org.users.owner.id,
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
    });
    await expect401(bearer(expired));
  });

  describe('JWT lifetime rules', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const sign = (claims: Record<string, unknown>) =>
      jwt.sign({ org: org.id, role: 'owner', ...claims }, secret(), { subject: org.users.owner.id, issuer: JWT_ISSUER, audience: JWT_AUDIENCE, noTimestamp: !('iat' in claims) });

    it('401 without exp', async () => {
      await expect401(bearer(sign({ iat: now() })));
    });

    it('401 with exp further from iat than JWT_TTL_SECONDS (30 years ahead)', async () => {
      await expect401(bearer(sign({ iat: now(), exp: now() + 30 * 365 * 24 * 3600 })));
      await expect401(bearer(sign({ iat: now(), exp: now() + 3601 })));
    });

    it('401 with iat in the future beyond the skew, or without iat', async () => {
      await expect401(bearer(sign({ iat: now() + 120, exp: now() + 600 })));
      await expect401(bearer(sign({ exp: now() + 600 })));
    });

    it('accepts iat a little ahead (within the skew) and a lifetime of exactly the TTL', async () => {
      for (const token of [sign({ iat: now() + 10, exp: now() + 600 }), sign({ iat: now(), exp: now() + 3600 })]) {
        expect((await api.http().get('/api/v1/webhooks').set(bearer(token))).status).toBe(200);
      }
    });
  });

  it('401 for alg "none"', async () => {
    const none = jwt.sign({ org: org.id, role: 'owner' }, '', { algorithm: 'none', subject: org.users.owner.id, issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
    await expect401(bearer(none));
  });

  it('401 at once for a revoked key', async () => {
    const key = await org.apiKey(['webhooks:manage']);
    expect((await api.http().get('/api/v1/webhooks').set(bearer(key.token))).status).toBe(200);
    await db.getRepository(ApiKey).update({ id: key.id }, { revokedAt: new Date() });
    await announcePrincipalChange({ kind: 'apiKey', id: key.id });
    await expect401(bearer(key.token));
  });

  it('401 for the JWT of a deleted user', async () => {
    const other = await seedOrganization('Deleted User Co');
    expect((await api.http().get('/api/v1/webhooks').set(bearer(other.users.admin.token))).status).toBe(200);
    await db.getRepository(User).update({ id: other.users.admin.id }, { deletedAt: new Date() });
    await announcePrincipalChange({ kind: 'user', id: other.users.admin.id });
    await expect401(bearer(other.users.admin.token));
  });

  it('the role is read fresh: a demoted admin loses manage at once', async () => {
    const other = await seedOrganization('Demoted Co');
    expect((await api.http().get('/api/v1/webhooks').set(bearer(other.users.admin.token))).status).toBe(200);
    await db.getRepository(User).update({ id: other.users.admin.id }, { role: 'member' });
    await announcePrincipalChange({ kind: 'user', id: other.users.admin.id });
    expect((await api.http().get('/api/v1/webhooks').set(bearer(other.users.admin.token))).status).toBe(403);
  });

  it('403 for member and viewer roles and for a key without webhooks:manage; owner, admin and * pass', async () => {
    const limited = await org.apiKey(['sessions:read', 'sessions:write', 'groups:write', 'messages:send']);
    for (const token of [org.users.member.token, org.users.viewer.token, limited.token]) {
      const res = await api.http().get('/api/v1/webhooks').set(bearer(token));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
      const create = await api.http().post('/api/v1/webhooks').set(bearer(token)).send({ url: 'https://example.com/x' });
      expect(create.status).toBe(403);
    }
    for (const token of [org.users.owner.token, org.users.admin.token, org.adminKey]) {
      expect((await api.http().get('/api/v1/webhooks').set(bearer(token))).status).toBe(200);
    }
  });

  it('a viewer (or a read-only key) gets 403 on the QR and the pairing code: reading them pairs the session to a phone', async () => {
    const readOnly = await org.apiKey(['sessions:read']);
    for (const token of [org.users.viewer.token, readOnly.token]) {
      const qr = await api.http().get('/api/v1/sessions/ses_whatever/qr').set(bearer(token));
      expect([qr.status, qr.body.error.code, qr.body.error.details]).toEqual([403, 'forbidden', { required: ['sessions:write'] }]);
      const code = await api.http().post('/api/v1/sessions/ses_whatever:request-code').set(bearer(token)).send({ phoneNumber: '+15550001111' });
      expect([code.status, code.body.error.code]).toEqual([403, 'forbidden']);
    }
    // a member may: the session is simply not there
    expect((await api.http().get('/api/v1/sessions/ses_whatever/qr').set(bearer(org.users.member.token))).status).toBe(404);
  });

  it('/auth/me describes an API key with its saved permissions', async () => {
    const key = await org.apiKey(['sessions:read', 'webhooks:manage']);
    const me = await api.http().get('/api/v1/auth/me').set(bearer(key.token));
    expect(me.body).toEqual({ kind: 'apiKey', id: key.id, organizationId: org.id, role: null, capabilities: ['sessions:read', 'webhooks:manage'] });
  });
});
