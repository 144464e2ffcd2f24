import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventEnvelope } from '@app/contracts';

/**
 * The event outbox: producers write the envelope here before appending it to the Redis stream,
 * so an event survives Redis losing the stream. `tx` (the inserting transaction) orders it for the
 * reconciler's checkpoint; a fan-out is recorded in `event_fanouts`, not on this row (migration OutboxCheckpoint).
 */
@Entity('events')
export class EventRecord {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  @Column({ name: 'session_id', type: 'text', nullable: true }) sessionId: string | null;
  @Column({ type: 'text' }) type: string;
  @Column({ type: 'jsonb' }) envelope: EventEnvelope;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ type: 'bigint', insert: false, update: false, select: false }) tx: string;
}
