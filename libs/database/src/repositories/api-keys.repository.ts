import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { ApiKey } from '../entities/api-key.entity';

/** What a key's owner may change on it after creation (permissions only through the CLI). */
export interface ApiKeyPatch {
  name?: string;
  sessionIds?: string[] | null;
  allowedIps?: string[] | null;
  expiresAt?: Date | null;
}

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private repo(manager: EntityManager = this.db.manager) {
    return manager.getRepository(ApiKey);
  }

  /** An organization's keys, revoked ones included, oldest first. */
  async listByOrganization(organizationId: string): Promise<ApiKey[]> {
    return this.repo().find({ where: { organizationId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** The keys an owner manages: not revoked, oldest first. */
  async listUsableByOrganization(organizationId: string): Promise<ApiKey[]> {
    return this.repo().find({ where: { organizationId, revokedAt: IsNull() }, order: { id: 'ASC' } });
  }

  /** A revoked or expired key is not found: its token authenticates nothing. */
  async findUsableByTokenHash(tokenHash: string): Promise<ApiKey | null> {
    const key = await this.repo().findOne({ where: { tokenHash, revokedAt: IsNull() } });
    return key && !isExpired(key) ? key : null;
  }

  /** Any key with this hash, revoked or expired too: whom a refused request is recorded against. */
  async findByTokenHash(tokenHash: string): Promise<ApiKey | null> {
    return this.repo().findOne({ where: { tokenHash } });
  }

  async findById(id: string): Promise<ApiKey | null> {
    return this.repo().findOne({ where: { id } });
  }

  /** An unrevoked key of this organization (expired ones included: their owner may extend or revoke them). */
  async findUsableInOrganization(organizationId: string, id: string, manager?: EntityManager): Promise<ApiKey | null> {
    return this.repo(manager).findOne({ where: { id, organizationId, revokedAt: IsNull() } });
  }

  async create(key: ApiKey, manager: EntityManager = this.db.manager): Promise<ApiKey> {
    return manager.getRepository(ApiKey).save(key);
  }

  /** What the API-key quota counts: keys not revoked. */
  async countUsableInOrganization(organizationId: string, manager: EntityManager = this.db.manager): Promise<number> {
    return manager.getRepository(ApiKey).count({ where: { organizationId, revokedAt: IsNull() } });
  }

  /** False when there is no usable (unrevoked) key with this id. */
  async changePermissions(id: string, permissions: string[], manager?: EntityManager): Promise<boolean> {
    const result = await this.repo(manager).update({ id, revokedAt: IsNull() }, { permissions });
    return !!result.affected;
  }

  /** False when there is no unrevoked key with this id. */
  async patch(id: string, patch: ApiKeyPatch, manager?: EntityManager): Promise<boolean> {
    if (Object.keys(patch).length === 0) return true;
    const result = await this.repo(manager).update({ id, revokedAt: IsNull() }, patch);
    return !!result.affected;
  }

  /** Keeps the first revocation time when called again; false when it was revoked already (or never existed). */
  async revoke(id: string, manager?: EntityManager): Promise<boolean> {
    const result = await this.repo(manager).update({ id, revokedAt: IsNull() }, { revokedAt: new Date() });
    return !!result.affected;
  }

  /** Best effort, at most once a minute per key (the caller throttles): a listing's "last used". */
  async touchUsed(id: string, at: Date): Promise<void> {
    await this.repo().update({ id }, { lastUsedAt: at });
  }
}

export const isExpired = (key: Pick<ApiKey, 'expiresAt'>, now = Date.now()): boolean => !!key.expiresAt && key.expiresAt.getTime() <= now;
