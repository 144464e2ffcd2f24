import { Injectable } from '@nestjs/common';
import { createSecretKey, KeyObject } from 'node:crypto';
import { ApiConfig } from '@app/config';
import { ALL_PERMISSIONS, API_KEY_PREFIX, DomainError, Permission, PERMISSIONS, PLATFORM_OPERATE, ROLE_PERMISSIONS } from '@app/contracts';
import { sha256Hex, verifyPassword } from '@app/crypto';
import { ApiKey, ApiKeysRepository, isExpired, User, UsersRepository } from '@app/database';
import { AddressRanges } from '@app/net-guard';
import { AccessTokenClaims, signAccessToken, VerifiedClaims, verifyAccessToken } from './access-token';
import type { Principal } from '../common/principal';
import { PrincipalCache } from './principal-cache';

export interface LoginToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

const unauthorized = () => new DomainError('unauthorized', 'missing or invalid credentials');

/** A fixed hash to compare against when the email is unknown, so both paths take the same time. */
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==';

/** Verified JWTs remembered at once (a few MB at most). */
const VERIFIED_TOKENS_MAX = 10_000;

const KNOWN_PERMISSIONS: readonly string[] = [...PERMISSIONS, PLATFORM_OPERATE];

function keyPrincipal(key: ApiKey): Principal {
  const permissions = new Set(key.permissions.filter((p): p is Permission => KNOWN_PERMISSIONS.includes(p)));
  // `*` is every organization permission, never the platform's
  if (key.permissions.includes(ALL_PERMISSIONS)) for (const p of PERMISSIONS) permissions.add(p);
  return {
    kind: 'apiKey',
    id: key.id,
    organizationId: key.organizationId,
    role: null,
    permissions,
    name: key.name,
    sessionIds: key.sessionIds ? new Set(key.sessionIds) : null,
    allowedIps: key.allowedIps ? AddressRanges.parse(key.allowedIps) : null,
    expiresAt: key.expiresAt ? key.expiresAt.getTime() : null,
    tokenVersion: 0,
  };
}

const userPrincipal = (user: User): Principal => ({
  kind: 'user',
  id: user.id,
  organizationId: user.organizationId,
  role: user.role,
  permissions: new Set(ROLE_PERMISSIONS[user.role]),
  name: user.email,
  sessionIds: null,
  allowedIps: null,
  expiresAt: null,
  tokenVersion: user.tokenVersion ?? 0,
});

/** An API key past its expiry is refused like a revoked one, even while its principal is cached. */
export const isExpiredPrincipal = (p: Principal, now = Date.now()): boolean => p.expiresAt !== null && p.expiresAt <= now;

@Injectable()
export class AuthService {
  /** Given a string, jsonwebtoken tries it as a PEM public key first and pays for the failure on every request. */
  private readonly jwtKey: KeyObject;
  private readonly verifiedTokens = new Map<string, VerifiedClaims>();

  constructor(
    private readonly config: ApiConfig,
    private readonly users: UsersRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly cache: PrincipalCache,
  ) {
    this.jwtKey = createSecretKey(Buffer.from(config.jwtSecret));
  }

  /**
   * The user of these credentials and a fresh token, or `{user, token: null}` when the password is wrong for a known
   * user (its organization records the refusal), or throws 401 when the email is unknown.
   */
  async login(email: string, password: string): Promise<{ user: User | null; token: LoginToken | null }> {
    const user = await this.users.findLiveByEmail(email.trim().toLowerCase());
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok) return { user, token: null };
    await this.users.touchLogin(user.id, new Date());
    return { user, token: this.issueToken(user) };
  }

  /** A login JWT for this user as it is now (its current token version). */
  issueToken(user: Pick<User, 'id' | 'organizationId' | 'role' | 'tokenVersion'>): LoginToken {
    const ttl = this.config.JWT_TTL_SECONDS;
    return {
      accessToken: signAccessToken({ sub: user.id, org: user.organizationId, role: user.role, ver: user.tokenVersion ?? 0 }, this.config.jwtSecret, ttl),
      tokenType: 'Bearer',
      expiresIn: ttl,
    };
  }

  /** The version a JWT carries (0 when it carries none), or null when it does not verify. */
  tokenVersionOf(token: string): number | null {
    const claims = this.jwtClaims(token);
    return claims ? (claims.ver ?? 0) : null;
  }

  /**
   * Resolves a bearer token to a Principal, or throws 401. Costs no query while the principal is cached. `keyHash`:
   * the API key's SHA-256 when the caller has it already (the rate limiter computed it for this request).
   */
  async authenticate(token: string, keyHash?: string): Promise<Principal> {
    return token.startsWith(API_KEY_PREFIX) ? this.fromApiKey(keyHash ?? sha256Hex(token)) : this.fromJwt(token);
  }

  /**
   * The principal `authenticate` resolves `token` to from memory alone (its cache entry is live), or null when it would
   * need a query or refuse the token. The rate limiter asks it before the guard runs: a credential known here is a
   * valid one, so its request limits may wait for the send's own round trip (docs/api.md, "Rate limits").
   */
  knownPrincipal(token: string, keyHash?: string): Principal | null {
    if (token.startsWith(API_KEY_PREFIX)) {
      const principal = this.cache.peek(`key:${keyHash ?? sha256Hex(token)}`);
      return principal && !isExpiredPrincipal(principal) ? principal : null;
    }
    const claims = this.jwtClaims(token);
    if (!claims) return null;
    const principal = this.cache.peek(`user:${claims.sub}`);
    return principal && principal.organizationId === claims.org && principal.tokenVersion === (claims.ver ?? 0) ? principal : null;
  }

  /** The principal as PostgreSQL has it now (bypassing the cache), or null when it was revoked or deleted. */
  async reload(principal: Principal): Promise<Principal | null> {
    if (principal.kind === 'apiKey') {
      const key = await this.apiKeys.findById(principal.id);
      return key && !key.revokedAt && !isExpired(key) ? keyPrincipal(key) : null;
    }
    const user = await this.users.findLiveInOrganization(principal.organizationId, principal.id);
    return user ? userPrincipal(user) : null;
  }

  private async fromApiKey(tokenHash: string): Promise<Principal> {
    const principal = await this.cache.get(`key:${tokenHash}`, async () => {
      const key = await this.apiKeys.findUsableByTokenHash(tokenHash);
      return key ? keyPrincipal(key) : null;
    });
    if (!principal || isExpiredPrincipal(principal)) throw unauthorized();
    this.noteKeyUse(principal.id);
    return principal;
  }

  private readonly keyUseNoted = new Map<string, number>();

  /** A key's `lastUsedAt`, written at most once a minute per key and replica, off the request's path. */
  private noteKeyUse(id: string): void {
    const now = Date.now();
    const last = this.keyUseNoted.get(id);
    if (last !== undefined && now - last < 60_000) return;
    if (this.keyUseNoted.size >= VERIFIED_TOKENS_MAX) this.keyUseNoted.clear();
    this.keyUseNoted.set(id, now);
    void this.apiKeys.touchUsed(id, new Date(now)).catch(() => undefined);
  }

  /**
   * The claims of a login JWT that verifies under every rule (docs/auth.md), or null. A token that verified is
   * remembered until its `exp` (the rate limiter and the guard both ask, and a client sends its token many times):
   * its signature cannot change, and every rule but expiry only gets easier as time passes. Failures are not kept.
   */
  jwtClaims(token: string): AccessTokenClaims | null {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const known = this.verifiedTokens.get(token);
    if (known) {
      if (known.exp > nowSeconds) return known;
      this.verifiedTokens.delete(token);
      return null;
    }
    try {
      const claims = verifyAccessToken(token, this.jwtKey, {
        maxTtlSeconds: this.config.JWT_TTL_SECONDS,
        skewSeconds: this.config.JWT_CLOCK_SKEW_SECONDS,
        nowSeconds,
      });
      // bounded: the oldest entry goes first (a Map iterates in insertion order)
      if (this.verifiedTokens.size >= VERIFIED_TOKENS_MAX) this.verifiedTokens.delete(this.verifiedTokens.keys().next().value!);
      this.verifiedTokens.set(token, claims);
      return claims;
    } catch {
      return null;
    }
  }

  private async fromJwt(token: string): Promise<Principal> {
    const claims = this.jwtClaims(token);
    if (!claims) throw unauthorized();
    // the user must still exist, in the same organization; the role is read fresh (or from the exact cache), not trusted from the token
    const principal = await this.cache.get(`user:${claims.sub}`, async () => {
      const user = await this.users.findLiveInOrganization(claims.org, claims.sub);
      return user ? userPrincipal(user) : null;
    });
    if (!principal || principal.organizationId !== claims.org || principal.tokenVersion !== (claims.ver ?? 0)) throw unauthorized();
    return principal;
  }
}
