import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SessionStatus, SyncHistoryMode } from '@app/contracts';

@Entity('sessions')
export class Session {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId: string;
  @Column({ name: 'created_by_user_id', type: 'text', nullable: true }) createdByUserId: string | null;
  @Column({ name: 'gateway_id', type: 'text', nullable: true }) gatewayId: string | null;
  @Column({ type: 'text' }) label: string;
  @Column({ type: 'text' }) status: SessionStatus;
  /** What the owner asked for: 'running' sessions are (re)placed on a live gateway; 'stopped' ones are not. */
  @Column({ name: 'desired_state', type: 'text', default: 'running' }) desiredState: 'running' | 'stopped';
  @Column({ name: 'phone_number', type: 'text', nullable: true }) phoneNumber: string | null;
  @Column({ name: 'wa_jid', type: 'text', nullable: true }) waJid: string | null;
  @Column({ name: 'wa_lid', type: 'text', nullable: true }) waLid: string | null;
  @Column({ name: 'is_admin_session', type: 'boolean', default: false }) isAdminSession: boolean;
  @Column({ name: 'auto_read', type: 'boolean', default: true }) autoRead: boolean;
  @Column({ name: 'presence_typing', type: 'boolean', default: false }) presenceTyping: boolean;
  @Column({ name: 'rate_per_min', type: 'integer', default: 20 }) ratePerMin: number;
  @Column({ name: 'rate_per_hour', type: 'integer', default: 200 }) ratePerHour: number;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' }) updatedAt: Date;
  @Column({ name: 'last_connected_at', type: 'timestamptz', nullable: true }) lastConnectedAt: Date | null;
  /** what history to store from the phone on pairing (CONTRACT 12) */
  @Column({ name: 'sync_history', type: 'text', default: 'none' }) syncHistory?: SyncHistoryMode;
  /** why the session is in its status (the last `session.status` reason): the Session view's `statusReason` */
  @Column({ name: 'last_reason', type: 'text', nullable: true }) lastReason?: string | null;
  /** when the holding gateway connects again, while a reconnect is scheduled: the Session view's `nextAttemptAt` */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true }) nextAttemptAt?: Date | null;
  /** the session's proxy URL sealed with SecretBox (only the gateway opens it); null: direct */
  @Column({ name: 'proxy_url', type: 'text', nullable: true }) proxyUrlSealed?: string | null;
  /** the same URL with its credentials masked: what the API shows */
  @Column({ name: 'proxy_url_shown', type: 'text', nullable: true }) proxyUrlShown?: string | null;
  /** CONTRACT 12: reject incoming calls */
  @Column({ name: 'reject_calls', type: 'boolean', default: false }) rejectCalls?: boolean;
  /** contacts' statuses are announced as `status.received` (CONTRACT 13); absent in rows built before it existed */
  @Column({ name: 'receive_status', type: 'boolean', default: false }) receiveStatus?: boolean;
}
