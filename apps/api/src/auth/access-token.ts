import jwt from 'jsonwebtoken';
import type { Role } from '@app/contracts';

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: unknown): string | null {
  return typeof header === 'string' ? (/^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? null) : null;
}

export const JWT_ISSUER = 'messaging-gateway';
export const JWT_AUDIENCE = 'messaging-gateway-api';

export interface AccessTokenClaims {
  sub: string; // user id
  org: string; // organization id
  role: Role;
}

export function signAccessToken(claims: AccessTokenClaims, secret: string, ttlSeconds: number): string {
  return jwt.sign({ org: claims.org, role: claims.role }, secret, {
    algorithm: 'HS256',
    subject: claims.sub,
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    expiresIn: ttlSeconds,
  });
}

/** Throws on a bad signature, expiry, wrong issuer/audience, or any algorithm but HS256 (alg "none" included). */
export function verifyAccessToken(token: string, secret: string): AccessTokenClaims {
  const decoded = jwt.verify(token, secret, { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
  if (typeof decoded !== 'object' || typeof decoded.sub !== 'string' || typeof decoded.org !== 'string') {
    throw new Error('malformed claims');
  }
  return { sub: decoded.sub, org: decoded.org as string, role: decoded.role as Role };
}
