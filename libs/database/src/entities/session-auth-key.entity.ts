import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row per Baileys auth-state item (the creds, or one signal key), encrypted at rest.
 * category 'creds' with keyId '' holds the credentials; other categories are Baileys' key types.
 */
@Entity('session_auth_keys')
export class SessionAuthKey {
  @PrimaryColumn({ name: 'session_id', type: 'text' }) sessionId: string;
  @PrimaryColumn({ type: 'text' }) category: string;
  @PrimaryColumn({ name: 'key_id', type: 'text' }) keyId: string;
  /** encrypted JSON (BufferJSON-encoded) */
  @Column({ type: 'text' }) value: string;
  @Column({ name: 'schema_version', type: 'integer', default: 1 }) schemaVersion: number;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' }) updatedAt: Date;
}
