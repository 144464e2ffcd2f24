import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Organization } from '../entities/organization.entity';

@Injectable()
export class OrganizationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private repo(manager: EntityManager = this.db.manager) {
    return manager.getRepository(Organization);
  }

  async create(org: Organization, manager?: EntityManager): Promise<Organization> {
    return this.repo(manager).save(org);
  }

  async exists(id: string): Promise<boolean> {
    return this.repo().exists({ where: { id } });
  }

  /** Every organization, oldest first (an operator's listing; there are few). */
  async list(): Promise<Organization[]> {
    return this.repo().find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }
}
