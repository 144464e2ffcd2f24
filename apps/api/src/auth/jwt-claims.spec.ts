import jwt from 'jsonwebtoken';
import type { ApiConfig } from '@app/config';
import { JWT_AUDIENCE, JWT_ISSUER, signAccessToken } from './access-token';
import { AuthService } from './auth.service';
import type { PrincipalCache } from './principal-cache';

const SECRET = 'a-test-secret-of-enough-length-000000';
const config = { jwtSecret: SECRET, JWT_TTL_SECONDS: 3600, JWT_CLOCK_SKEW_SECONDS: 30 } as unknown as ApiConfig;
const service = () => new AuthService(config, null as never, null as never, null as unknown as PrincipalCache);

describe('AuthService.jwtClaims', () => {
  afterEach(() => jest.restoreAllMocks());

  it('remembers a verified token until its exp, and refuses it from then on', () => {
    const auth = service();
    const token = signAccessToken({ sub: 'usr_1', org: 'org_1', role: 'admin' }, SECRET, 60);
    const verify = jest.spyOn(jwt, 'verify');
    expect(auth.jwtClaims(token)).toMatchObject({ sub: 'usr_1', org: 'org_1', role: 'admin' });
    expect(auth.jwtClaims(token)).toMatchObject({ sub: 'usr_1' });
    expect(verify).toHaveBeenCalledTimes(1);
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + 61_000);
    expect(auth.jwtClaims(token)).toBeNull();
  });

  it('never remembers a failure: a bad signature or a token from the future is refused every time it is shown', () => {
    const auth = service();
    const forged = signAccessToken({ sub: 'usr_1', org: 'org_1', role: 'admin' }, 'another-secret-000000000000000000000', 60);
    expect(auth.jwtClaims(forged)).toBeNull();
    expect(auth.jwtClaims(forged)).toBeNull();
    const iat = Math.floor(Date.now() / 1000) + 600;
    const early = jwt.sign({ org: 'org_1', role: 'admin', iat }, SECRET, { algorithm: 'HS256', subject: 'usr_1', issuer: JWT_ISSUER, audience: JWT_AUDIENCE, expiresIn: 60 });
    expect(auth.jwtClaims(early)).toBeNull();
    expect(auth.jwtClaims(early)).toBeNull();
  });
});
