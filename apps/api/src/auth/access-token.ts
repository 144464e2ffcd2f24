import jwt, { Secret } from 'jsonwebtoken';
import { API_KEY_PREFIX, Role } from '@app/contracts';
import { sha256Hex } from '@app/crypto';

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: unknown): string | null {
  return typeof header === 'string' ? (/^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? null) : null;
}

/** The key of an `X-Api-Key: gwk_…` header (WAHA's convention), or null; it carries API keys only, never a JWT. */
export function apiKeyHeader(header: unknown): string | null {
  if (typeof header !== 'string') return null;
  const key = header.trim();
  return key.startsWith(API_KEY_PREFIX) && !/\s/.test(key) ? key : null;
}

/**
 * The credential of a request: `Authorization: Bearer` or `X-Api-Key`. Both present and different is refused (null):
 * a proxy that adds one header must not silently decide which identity a request runs as.
 */
export function requestToken(headers: { authorization?: unknown; 'x-api-key'?: unknown }): string | null {
  const bearer = bearerToken(headers.authorization);
  const key = apiKeyHeader(headers['x-api-key']);
  if (headers.authorization !== undefined && headers['x-api-key'] !== undefined && bearer !== key) return null;
  return bearer ?? key;
}

const tokenHashes = new WeakMap<object, { token: string; hash: string }>();

/**
 * The SHA-256 (hex) of a request's API key, computed once per request: the rate limiter names the credential by it
 * and the auth guard looks the key up by it. Kept beside the request object only, so it goes with it.
 */
export function requestTokenHash(req: object, token: string): string {
  const known = tokenHashes.get(req);
  if (known?.token === token) return known.hash;
  const hash = sha256Hex(token);
  tokenHashes.set(req, { token, hash });
  return hash;
}

export const JWT_ISSUER = 'messaging-gateway';
export const JWT_AUDIENCE = 'messaging-gateway-api';

export interface AccessTokenClaims {
  sub: string; // user id
  org: string; // organization id
  role: Role;
  /** The user's token version when it was issued (absent in tokens from before versions: 0). */
  ver?: number;
}

export interface AccessTokenRules {
  /** The longest lifetime a token may claim (`exp - iat`), seconds. */
  maxTtlSeconds: number;
  /** How far `iat` may lie in the future, seconds. */
  skewSeconds: number;
  /** Now, epoch seconds. */
  nowSeconds: number;
}

export function signAccessToken(claims: AccessTokenClaims, secret: string, ttlSeconds: number): string {
  return jwt.sign({ org: claims.org, role: claims.role, ver: claims.ver ?? 0 }, secret, {
    algorithm: 'HS256',
    subject: claims.sub,
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    expiresIn: ttlSeconds,
  });
}

/**
 * Throws on a bad signature, expiry, wrong issuer/audience, any algorithm but HS256 (alg "none" included), a missing
 * `exp` or `iat`, a lifetime longer than allowed, or an `iat` in the future: a token minted with a leaked secret or a
 * skewed clock must not live for years.
 */
/** Verified claims, with the expiry they were verified against. */
export interface VerifiedClaims extends AccessTokenClaims {
  exp: number;
  ver: number;
}

export function verifyAccessToken(token: string, secret: Secret, rules: AccessTokenRules): VerifiedClaims {
  const decoded = jwt.verify(token, secret, {
    algorithms: ['HS256'],
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    clockTimestamp: rules.nowSeconds,
  });
  if (typeof decoded !== 'object' || typeof decoded.sub !== 'string' || typeof decoded.org !== 'string') {
    throw new Error('malformed claims');
  }
  if (typeof decoded.exp !== 'number' || typeof decoded.iat !== 'number') throw new Error('exp and iat are required');
  if (decoded.iat > rules.nowSeconds + rules.skewSeconds) throw new Error('iat in the future');
  if (decoded.exp - decoded.iat > rules.maxTtlSeconds) throw new Error('lifetime longer than allowed');
  return { sub: decoded.sub, org: decoded.org as string, role: decoded.role as Role, exp: decoded.exp, ver: typeof decoded.ver === 'number' ? decoded.ver : 0 };
}
