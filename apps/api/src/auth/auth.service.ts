import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { ALL_PERMISSIONS, API_KEY_PREFIX, DomainError, Permission, PERMISSIONS, ROLE_PERMISSIONS } from '@app/contracts';
import { sha256Hex, verifyPassword } from '@app/crypto';
import { ApiKeysRepository, UsersRepository } from '@app/database';
import { signAccessToken, verifyAccessToken } from './access-token';
import type { Principal } from './principal';

const unauthorized = () => new DomainError('unauthorized', 'missing or invalid credentials');

/** A fixed hash to compare against when the email is unknown, so both paths take the same time. */
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==';

@Injectable()
export class AuthService {
  constructor(
    private readonly config: ApiConfig,
    private readonly users: UsersRepository,
    private readonly apiKeys: ApiKeysRepository,
  ) {}

  async login(email: string, password: string): Promise<{ accessToken: string; tokenType: 'Bearer'; expiresIn: number }> {
    const user = await this.users.findLiveByEmail(email.trim().toLowerCase());
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok) throw unauthorized();
    const ttl = this.config.JWT_TTL_SECONDS;
    return {
      accessToken: signAccessToken({ sub: user.id, org: user.organizationId, role: user.role }, this.config.jwtSecret, ttl),
      tokenType: 'Bearer',
      expiresIn: ttl,
    };
  }

  /** Resolves a bearer token to a Principal, or throws 401. */
  async authenticate(token: string): Promise<Principal> {
    return token.startsWith(API_KEY_PREFIX) ? this.fromApiKey(token) : this.fromJwt(token);
  }

  private async fromApiKey(token: string): Promise<Principal> {
    const key = await this.apiKeys.findUsableByTokenHash(sha256Hex(token));
    if (!key) throw unauthorized();
    const permissions = key.permissions.includes(ALL_PERMISSIONS)
      ? new Set<Permission>(PERMISSIONS)
      : new Set(key.permissions.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(p)));
    return { kind: 'apiKey', id: key.id, organizationId: key.organizationId, role: null, permissions };
  }

  private async fromJwt(token: string): Promise<Principal> {
    let claims;
    try {
      claims = verifyAccessToken(token, this.config.jwtSecret);
    } catch {
      throw unauthorized();
    }
    // the user must still exist, in the same organization; the role is read fresh, not trusted from the token
    const user = await this.users.findLiveInOrganization(claims.org, claims.sub);
    if (!user) throw unauthorized();
    return { kind: 'user', id: user.id, organizationId: user.organizationId, role: user.role, permissions: new Set(ROLE_PERMISSIONS[user.role]) };
  }
}
