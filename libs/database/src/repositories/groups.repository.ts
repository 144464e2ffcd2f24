import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newId } from '../ids';
import { Group } from '../entities/group.entity';
import { keysetPage, PageRequest, RowPage } from './keyset-page';

/** A group as the network describes it. */
export type GroupFacts = Pick<Group, 'groupJid' | 'subject' | 'description' | 'ownerJid' | 'participants' | 'isAnnounce' | 'isLocked'>;

/** PostgreSQL text cannot hold NUL, but a name on the network can: it is dropped rather than failing the write. */
const storable = <T extends string | null | undefined>(text: T): T => (typeof text === 'string' ? (text.replace(/\0/g, '') as T) : text);

@Injectable()
export class GroupsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the group, or refreshes what the network says of it when the session already knows it. */
  async upsert(organizationId: string, sessionId: string, g: GroupFacts): Promise<void> {
    await this.db.query(
      `INSERT INTO groups (id, organization_id, session_id, group_jid, subject, description, owner_jid, participants, is_announce, is_locked)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (session_id, group_jid) DO UPDATE SET subject = EXCLUDED.subject, description = EXCLUDED.description,
         owner_jid = EXCLUDED.owner_jid, participants = EXCLUDED.participants, is_announce = EXCLUDED.is_announce,
         is_locked = EXCLUDED.is_locked, updated_at = now()`,
      [newId('grp'), organizationId, sessionId, g.groupJid, storable(g.subject), storable(g.description), storable(g.ownerJid), g.participants, g.isAnnounce, g.isLocked],
    );
  }

  /** An admin changed the group on the network; only the named fields change. */
  async applyChanges(sessionId: string, groupJid: string, changes: Partial<Pick<Group, 'subject' | 'description' | 'isAnnounce' | 'isLocked'>>): Promise<void> {
    await this.db.query(
      `UPDATE groups SET subject = COALESCE($3, subject), description = COALESCE($4, description),
         is_announce = COALESCE($5, is_announce), is_locked = COALESCE($6, is_locked), updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [sessionId, groupJid, storable(changes.subject) ?? null, storable(changes.description) ?? null, changes.isAnnounce ?? null, changes.isLocked ?? null],
    );
  }

  /** Members joined (delta > 0) or left; the count never goes below zero. */
  async addParticipants(sessionId: string, groupJid: string, delta: number): Promise<void> {
    await this.db.query(
      `UPDATE groups SET participants = GREATEST(participants + $3, 0), updated_at = now() WHERE session_id = $1 AND group_jid = $2`,
      [sessionId, groupJid, delta],
    );
  }

  async pageOfSession(organizationId: string, sessionId: string, page: PageRequest): Promise<RowPage<Group>> {
    return keysetPage(this.db.getRepository(Group), { sessionId, organizationId }, page);
  }
}
