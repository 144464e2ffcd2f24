import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('api_keys')
export class ApiKey {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  @Column({ type: 'text' }) name: string;
  /** sha256 hex of the whole token; the token itself is shown once and never stored. */
  @Column({ name: 'token_hash', type: 'text' }) tokenHash: string;
  /** First characters of the token, to recognise a key in listings. */
  @Column({ name: 'token_hint', type: 'text' }) tokenHint: string;
  @Column({ type: 'text', array: true }) permissions: string[];
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt: Date | null;
  /** The only sessions the key may reach (null: every session of its organization). */
  @Column({ name: 'session_ids', type: 'text', array: true, nullable: true }) sessionIds?: string[] | null;
  /** CIDRs the key may be used from (null: anywhere). */
  @Column({ name: 'allowed_ips', type: 'text', array: true, nullable: true }) allowedIps?: string[] | null;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt?: Date | null;
  /** `user:<id>`, `apiKey:<id>` or `cli`: who made it. */
  @Column({ name: 'created_by', type: 'text', nullable: true }) createdBy?: string | null;
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true }) lastUsedAt?: Date | null;
}
