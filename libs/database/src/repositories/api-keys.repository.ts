import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { ApiKey } from '../entities/api-key.entity';

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get repo() {
    return this.db.getRepository(ApiKey);
  }

  /** An organization's keys, revoked ones included, oldest first. */
  async listByOrganization(organizationId: string): Promise<ApiKey[]> {
    return this.repo.find({ where: { organizationId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** A revoked key is not found: its token authenticates nothing. */
  async findUsableByTokenHash(tokenHash: string): Promise<ApiKey | null> {
    return this.repo.findOne({ where: { tokenHash, revokedAt: IsNull() } });
  }

  async findById(id: string): Promise<ApiKey | null> {
    return this.repo.findOne({ where: { id } });
  }

  async create(key: ApiKey, manager: EntityManager = this.db.manager): Promise<ApiKey> {
    return manager.getRepository(ApiKey).save(key);
  }

  /** What the API-key quota counts: keys not revoked. */
  async countUsableInOrganization(organizationId: string, manager: EntityManager = this.db.manager): Promise<number> {
    return manager.getRepository(ApiKey).count({ where: { organizationId, revokedAt: IsNull() } });
  }

  /** False when there is no usable (unrevoked) key with this id. */
  async changePermissions(id: string, permissions: string[]): Promise<boolean> {
    const result = await this.repo.update({ id, revokedAt: IsNull() }, { permissions });
    return !!result.affected;
  }

  /** Keeps the first revocation time when called again. */
  async revoke(id: string): Promise<void> {
    await this.repo.update({ id, revokedAt: IsNull() }, { revokedAt: new Date() });
  }
}
