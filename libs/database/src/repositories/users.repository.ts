import { Injectable } from '@nestjs/common';
import type { Role } from '@app/contracts';
import { User } from '../entities/user.entity';
import { Db, EntityTable, type Tx } from '../pg';

const USERS = new EntityTable(User);

/** Deleted users (deleted_at set) are kept for the record but found by none of the lookups. */
@Injectable()
export class UsersRepository {
  constructor(private readonly db: Db) {}

  /** `email` as stored: lower-case. */
  async findLiveByEmail(email: string): Promise<User | null> {
    return USERS.selectOne(this.db, 'email = $1 AND deleted_at IS NULL', [email]);
  }

  /** Any user with this id, deleted ones included (whose organization a CLI change is recorded in). */
  async findById(id: string, tx?: Tx): Promise<User | null> {
    return USERS.selectOne(tx ?? this.db, 'id = $1', [id]);
  }

  async findLiveInOrganization(organizationId: string, id: string, tx?: Tx): Promise<User | null> {
    return USERS.selectOne(tx ?? this.db, 'id = $1 AND organization_id = $2 AND deleted_at IS NULL', [id, organizationId]);
  }

  /** The organization's live members, oldest first. */
  async listLiveInOrganization(organizationId: string): Promise<User[]> {
    return USERS.select(this.db, 'organization_id = $1 AND deleted_at IS NULL', [organizationId], 'ORDER BY id');
  }

  async countLiveInOrganization(organizationId: string, tx?: Tx): Promise<number> {
    const [row] = await (tx ?? this.db).query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE organization_id = $1 AND deleted_at IS NULL', [organizationId]);
    return row.n;
  }

  /**
   * The organization's live owners, their rows locked until the transaction ends: two concurrent demotions of the
   * last two owners serialize here, and the second sees one owner left.
   */
  async lockOwners(organizationId: string, tx: Tx): Promise<string[]> {
    const rows = await tx.query<{ id: string }>(
      `SELECT id FROM users WHERE organization_id = $1 AND role = 'owner' AND deleted_at IS NULL ORDER BY id FOR UPDATE`,
      [organizationId],
    );
    return rows.map((r) => r.id);
  }

  async emailTaken(email: string, tx?: Tx): Promise<boolean> {
    return (await (tx ?? this.db).query('SELECT 1 FROM users WHERE email = $1 AND deleted_at IS NULL LIMIT 1', [email])).length > 0;
  }

  async create(user: User, tx?: Tx): Promise<User> {
    return USERS.insert(tx ?? this.db, user);
  }

  /** False when there is no live user with this id. */
  async changeRole(id: string, role: Role, tx?: Tx): Promise<boolean> {
    return (await (tx ?? this.db).affected('UPDATE users SET role = $2 WHERE id = $1 AND deleted_at IS NULL', [id, role])) > 0;
  }

  /** False when there is no live user with this id. */
  async softDelete(id: string, tx?: Tx): Promise<boolean> {
    return (await (tx ?? this.db).affected('UPDATE users SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL', [id, new Date()])) > 0;
  }

  /** A new password ends every login JWT issued before it (the token version moves on); returns the new version. */
  async setPassword(id: string, passwordHash: string, tx?: Tx): Promise<number | null> {
    const updated = await (tx ?? this.db).query<{ token_version: number }>(
      `UPDATE users SET password_hash = $2, token_version = token_version + 1 WHERE id = $1 AND deleted_at IS NULL RETURNING token_version`,
      [id, passwordHash],
    );
    return updated[0]?.token_version ?? null;
  }

  async touchLogin(id: string, at: Date): Promise<void> {
    await this.db.query('UPDATE users SET last_login_at = $2 WHERE id = $1', [id, at]);
  }
}
