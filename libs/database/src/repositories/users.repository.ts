import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import type { Role } from '@app/contracts';
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

  /** Any user with this id, deleted ones included (whose organization a CLI change is recorded in). */
  async findById(id: string, manager?: EntityManager): Promise<User | null> {
    return this.repo(manager).findOne({ where: { id } });
  }

  async findLiveInOrganization(organizationId: string, id: string, manager?: EntityManager): Promise<User | null> {
    return this.repo(manager).findOne({ where: { id, organizationId, deletedAt: IsNull() } });
  }

  /** The organization's live members, oldest first. */
  async listLiveInOrganization(organizationId: string): Promise<User[]> {
    return this.repo().find({ where: { organizationId, deletedAt: IsNull() }, order: { id: 'ASC' } });
  }

  async countLiveInOrganization(organizationId: string, manager?: EntityManager): Promise<number> {
    return this.repo(manager).count({ where: { organizationId, deletedAt: IsNull() } });
  }

  /**
   * The organization's live owners, their rows locked until the transaction ends: two concurrent demotions of the
   * last two owners serialize here, and the second sees one owner left.
   */
  async lockOwners(organizationId: string, tx: EntityManager): Promise<string[]> {
    const rows: Array<{ id: string }> = await tx.query(
      `SELECT id FROM users WHERE organization_id = $1 AND role = 'owner' AND deleted_at IS NULL ORDER BY id FOR UPDATE`,
      [organizationId],
    );
    return rows.map((r) => r.id);
  }

  async emailTaken(email: string, manager?: EntityManager): Promise<boolean> {
    return this.repo(manager).exists({ where: { email, deletedAt: IsNull() } });
  }

  async create(user: User, manager?: EntityManager): Promise<User> {
    return this.repo(manager).save(user);
  }

  /** False when there is no live user with this id. */
  async changeRole(id: string, role: Role, manager?: EntityManager): Promise<boolean> {
    const result = await this.repo(manager).update({ id, deletedAt: IsNull() }, { role });
    return !!result.affected;
  }

  /** False when there is no live user with this id. */
  async softDelete(id: string, manager?: EntityManager): Promise<boolean> {
    const result = await this.repo(manager).update({ id, deletedAt: IsNull() }, { deletedAt: new Date() });
    return !!result.affected;
  }

  /** A new password ends every login JWT issued before it (the token version moves on); returns the new version. */
  async setPassword(id: string, passwordHash: string, manager?: EntityManager): Promise<number | null> {
    const rows: Array<{ token_version: number }> = await (manager ?? this.db.manager).query(
      `UPDATE users SET password_hash = $2, token_version = token_version + 1 WHERE id = $1 AND deleted_at IS NULL RETURNING token_version`,
      [id, passwordHash],
    );
    // an UPDATE … RETURNING answers [rows, count] through the pg driver
    const updated = (rows as unknown as [Array<{ token_version: number }>, number])[0];
    return updated?.[0]?.token_version ?? null;
  }

  async touchLogin(id: string, at: Date): Promise<void> {
    await this.repo().update({ id }, { lastLoginAt: at });
  }
}
