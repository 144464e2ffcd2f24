import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventEnvelope } from '@app/contracts';

/**
 * The event outbox: producers write the envelope here before appending it to the Redis stream,
 * so an event survives Redis losing the stream. fanned_out_at is set once its deliveries exist.
 */
@Entity('events')
export class EventRecord {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  @Column({ name: 'session_id', type: 'text', nullable: true }) sessionId: string | null;
  @Column({ type: 'text' }) type: string;
  @Column({ type: 'jsonb' }) envelope: EventEnvelope;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'fanned_out_at', type: 'timestamptz', nullable: true }) fannedOutAt: Date | null;
}
