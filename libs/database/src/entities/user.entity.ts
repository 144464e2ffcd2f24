import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from '@app/contracts';

@Entity('users')
export class User {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  /** Stored lower-case; unique across the service (login is by email). */
  @Column({ type: 'text' }) email: string;
  /** scrypt$N$r$p$salt$hash */
  @Column({ name: 'password_hash', type: 'text' }) passwordHash: string;
  @Column({ type: 'text' }) role: Role;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt: Date | null;
  @Column({ type: 'text', nullable: true }) name?: string | null;
  @Column({ name: 'last_login_at', type: 'timestamptz', nullable: true }) lastLoginAt?: Date | null;
  /** Carried by the user's login JWTs as `ver`; bumped by a password change, which ends every older token. */
  @Column({ name: 'token_version', type: 'integer', default: 0 }) tokenVersion?: number;
}
