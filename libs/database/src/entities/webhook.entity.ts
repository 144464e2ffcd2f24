import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { DestinationKind, RetryPolicy, SinkTarget } from '@app/contracts';

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
  /** AES-256-GCM ciphertext with key id (see libs/crypto): a webhook's HMAC key, a sink's URL password; never returned, never logged. */
  @Column({ name: 'secret_encrypted', type: 'text', nullable: true }) secretEncrypted: string | null;
  /** optional cap on POSTs per second to the receiver (per dispatcher replica) */
  @Column({ name: 'rate_limit_per_second', type: 'integer', nullable: true }) rateLimitPerSecond: number | null;
  /** the first failure after the last success (the dispatchers' breaker); null while the receiver answers */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true }) failingSince: Date | null;
  /** set when the dispatchers switched the webhook off after failing continuously; cleared by re-enabling */
  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true }) disabledAt: Date | null;
  @Column({ name: 'disabled_reason', type: 'text', nullable: true }) disabledReason: string | null;
  /** how deliveries are made (CONTRACT 15): an HTTPS POST, an AMQP publish, a JetStream publish */
  @Column({ type: 'text', default: 'http' }) kind: DestinationKind;
  /** a sink's exchange and routing key, or subject; `{}` for a webhook */
  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" }) target: SinkTarget;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' }) updatedAt: Date;
}
