import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { DeliveryStatus } from '@app/contracts';

/** One record per (webhook, event); unique so a re-read event never doubles. */
@Entity('deliveries')
export class Delivery {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'webhook_id', type: 'text' }) webhookId: string;
  @Column({ name: 'event_id', type: 'text' }) eventId: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  @Column({ name: 'event_type', type: 'text' }) eventType: string;
  @Column({ type: 'text' }) status: DeliveryStatus;
  @Column({ type: 'integer', default: 0 }) attempts: number;
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true }) nextAttemptAt: Date | null;
  @Column({ name: 'last_status_code', type: 'integer', nullable: true }) lastStatusCode: number | null;
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError: string | null;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' }) updatedAt: Date;
  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true }) deliveredAt: Date | null;
}

@Entity('delivery_attempts')
export class DeliveryAttempt {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'delivery_id', type: 'text' }) deliveryId: string;
  @Column({ name: 'attempt_no', type: 'integer' }) attemptNo: number;
  @Column({ name: 'status_code', type: 'integer', nullable: true }) statusCode: number | null;
  @Column({ name: 'duration_ms', type: 'integer' }) durationMs: number;
  @Column({ type: 'text', nullable: true }) error: string | null;
  @Column({ name: 'response_snippet', type: 'text', nullable: true }) responseSnippet: string | null;
  @Column({ name: 'started_at', type: 'timestamptz' }) startedAt: Date;
}
