import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RetryPolicy } from '@app/contracts';

@Entity('webhooks')
export class Webhook {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  @Column({ type: 'text' }) url: string;
  @Column({ type: 'text', array: true }) events: string[];
  @Column({ name: 'session_id', type: 'text', nullable: true }) sessionId: string | null;
  @Column({ type: 'boolean', default: true }) active: boolean;
  @Column({ name: 'custom_headers', type: 'jsonb', default: () => "'{}'::jsonb" }) customHeaders: Record<string, string>;
  @Column({ name: 'retry_policy', type: 'jsonb' }) retryPolicy: RetryPolicy;
  /** AES-256-GCM ciphertext with key id (see libs/crypto); never returned, never logged. */
  @Column({ name: 'secret_encrypted', type: 'text', nullable: true }) secretEncrypted: string | null;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' }) updatedAt: Date;
}
