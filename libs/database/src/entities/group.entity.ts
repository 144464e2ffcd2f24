import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('groups')
export class Group {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  @Column({ name: 'session_id', type: 'text' }) sessionId: string;
  @Column({ name: 'group_jid', type: 'text' }) groupJid: string;
  @Column({ type: 'text' }) subject: string;
  @Column({ type: 'text', default: '' }) description: string;
  @Column({ name: 'owner_jid', type: 'text' }) ownerJid: string;
  @Column({ type: 'integer' }) participants: number;
  @Column({ name: 'is_announce', type: 'boolean', default: false }) isAnnounce: boolean;
  @Column({ name: 'is_locked', type: 'boolean', default: false }) isLocked: boolean;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' }) updatedAt: Date;
}
