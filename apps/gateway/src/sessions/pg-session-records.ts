import type { DataSource } from 'typeorm';
import type { GroupChanges } from '@app/contracts';
import { newId } from '@app/database';
import type { GroupInfo } from '../engine/engine.interface';
import type { SessionRecord, SessionRecordPatch, SessionRecords } from './session-ports';

const COLUMNS: Record<keyof SessionRecordPatch, string> = {
  status: 'status',
  desiredState: 'desired_state',
  phoneNumber: 'phone_number',
  waJid: 'wa_jid',
  waLid: 'wa_lid',
  lastConnectedAt: 'last_connected_at',
};

/** Statuses a restarted gateway does not bring back by itself: the owner has to act first. */
const NOT_RESUMED = ['stopped', 'failed', 'logged_out'];

/** The sessions table as the gateway sees it (plain SQL: the runner writes a few columns, often). */
export class PgSessionRecords implements SessionRecords {
  constructor(private readonly db: DataSource) {}

  async find(sessionId: string): Promise<SessionRecord | null> {
    const rows: Array<{
      id: string;
      organization_id: string;
      status: SessionRecord['status'];
      desired_state: SessionRecord['desiredState'];
      phone_number: string | null;
      auto_read: boolean;
      presence_typing: boolean;
    }> = await this.db.query(
      'SELECT id, organization_id, status, desired_state, phone_number, auto_read, presence_typing FROM sessions WHERE id = $1',
      [sessionId],
    );
    const r = rows[0];
    return r
      ? {
          id: r.id,
          organizationId: r.organization_id,
          status: r.status,
          desiredState: r.desired_state,
          phoneNumber: r.phone_number,
          autoRead: r.auto_read,
          presenceTyping: r.presence_typing,
        }
      : null;
  }

  async update(sessionId: string, patch: SessionRecordPatch): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [sessionId];
    for (const [key, value] of Object.entries(patch) as [keyof SessionRecordPatch, unknown][]) {
      if (value === undefined) continue;
      values.push(value);
      sets.push(`${COLUMNS[key]} = $${values.length}`);
    }
    if (sets.length === 0) return;
    await this.db.query(`UPDATE sessions SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, values);
  }

  async saveGroup(organizationId: string, sessionId: string, g: GroupInfo): Promise<void> {
    await this.db.query(
      `INSERT INTO groups (id, organization_id, session_id, group_jid, subject, description, owner_jid, participants, is_announce, is_locked)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (session_id, group_jid) DO UPDATE SET subject = EXCLUDED.subject, description = EXCLUDED.description,
         owner_jid = EXCLUDED.owner_jid, participants = EXCLUDED.participants, is_announce = EXCLUDED.is_announce,
         is_locked = EXCLUDED.is_locked, updated_at = now()`,
      [newId('grp'), organizationId, sessionId, g.groupJid, g.subject, g.description ?? '', g.ownerJid, g.participants.length, g.isAnnounce, g.isLocked],
    );
  }

  async updateGroup(sessionId: string, groupJid: string, changes: GroupChanges): Promise<void> {
    await this.db.query(
      `UPDATE groups SET subject = COALESCE($3, subject), description = COALESCE($4, description),
         is_announce = COALESCE($5, is_announce), is_locked = COALESCE($6, is_locked), updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [sessionId, groupJid, changes.subject ?? null, changes.description ?? null, changes.isAnnounce ?? null, changes.isLocked ?? null],
    );
  }

  async addGroupParticipants(sessionId: string, groupJid: string, delta: number): Promise<void> {
    await this.db.query(
      `UPDATE groups SET participants = GREATEST(participants + $3, 0), updated_at = now() WHERE session_id = $1 AND group_jid = $2`,
      [sessionId, groupJid, delta],
    );
  }

  async resumable(gatewayId: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM sessions WHERE gateway_id = $1 AND desired_state = 'running' AND status <> ALL($2) ORDER BY id`,
      [gatewayId, NOT_RESUMED],
    );
    return rows.map((r) => r.id);
  }
}
