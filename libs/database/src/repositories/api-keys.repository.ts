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

  async create(key: ApiKey, manager?: EntityManager): Promise<ApiKey> {
    return (manager ?? this.db.manager).getRepository(ApiKey).save(key);
  }

  /** Keeps the first revocation time when called again. */
  async revoke(id: string): Promise<void> {
    await this.repo.update({ id, revokedAt: IsNull() }, { revokedAt: new Date() });
  }
}
