import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { User } from '../entities/user.entity';

/** Deleted users (deleted_at set) are kept for the record but found by none of the lookups. */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private repo(manager: EntityManager = this.db.manager) {
    return manager.getRepository(User);
  }

  /** `email` as stored: lower-case. */
  async findLiveByEmail(email: string): Promise<User | null> {
    return this.repo().findOne({ where: { email, deletedAt: IsNull() } });
  }

  async findLiveInOrganization(organizationId: string, id: string): Promise<User | null> {
    return this.repo().findOne({ where: { id, organizationId, deletedAt: IsNull() } });
  }

  async emailTaken(email: string, manager?: EntityManager): Promise<boolean> {
    return this.repo(manager).exists({ where: { email, deletedAt: IsNull() } });
  }

  async create(user: User, manager?: EntityManager): Promise<User> {
    return this.repo(manager).save(user);
  }

  /** False when there is no live user with this id. */
  async changeRole(id: string, role: User['role']): Promise<boolean> {
    const result = await this.repo().update({ id, deletedAt: IsNull() }, { role });
    return !!result.affected;
  }

  /** False when there is no live user with this id. */
  async softDelete(id: string): Promise<boolean> {
    const result = await this.repo().update({ id, deletedAt: IsNull() }, { deletedAt: new Date() });
    return !!result.affected;
  }
}
