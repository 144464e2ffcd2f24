import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newId } from '../ids';
import { Group } from '../entities/group.entity';
import { keysetPage, PageRequest, RowPage } from './keyset-page';

/** A group as the network describes it, members listed (the `participants` column counts them). */
export type GroupFacts = Pick<Group, 'groupJid' | 'subject' | 'description' | 'ownerJid' | 'isAnnounce' | 'isLocked'> & { participants: string[] };

interface GroupMetadataRow {
  group_jid: string;
  subject: string;
  description: string;
  owner_jid: string;
  members: string[];
  is_announce: boolean;
  is_locked: boolean;
}

/**
 * Owner of the `groups` table. `members` is the member list when known (NULL on rows stored before the list was
 * kept: those only move their count until the network refreshes them).
 */

/** PostgreSQL text cannot hold NUL, but a name on the network can: it is dropped rather than failing the write. */
const storable = <T extends string | null | undefined>(text: T): T => (typeof text === 'string' ? (text.replace(/\0/g, '') as T) : text);

@Injectable()
export class GroupsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the group, or refreshes what the network says of it when the session already knows it. */
  async upsert(organizationId: string, sessionId: string, g: GroupFacts): Promise<void> {
    const members = [...new Set(g.participants)];
    await this.db.query(
      `INSERT INTO groups (id, organization_id, session_id, group_jid, subject, description, owner_jid, participants, members, is_announce, is_locked)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (session_id, group_jid) DO UPDATE SET subject = EXCLUDED.subject, description = EXCLUDED.description,
         owner_jid = EXCLUDED.owner_jid, participants = EXCLUDED.participants, members = EXCLUDED.members,
         is_announce = EXCLUDED.is_announce, is_locked = EXCLUDED.is_locked, updated_at = now()`,
      [newId('grp'), organizationId, sessionId, g.groupJid, storable(g.subject), storable(g.description), storable(g.ownerJid), members.length, members, g.isAnnounce, g.isLocked],
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

  /** Members joined; a member already listed is not counted twice. */
  async addParticipants(sessionId: string, groupJid: string, jids: string[]): Promise<void> {
    await this.db.query(
      `UPDATE groups SET
         members = CASE WHEN members IS NULL THEN NULL ELSE ARRAY(SELECT DISTINCT unnest(members || $3::text[]) ORDER BY 1) END,
         participants = CASE WHEN members IS NULL THEN participants + cardinality($3::text[])
                             ELSE (SELECT count(DISTINCT m)::int FROM unnest(members || $3::text[]) m) END,
         updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [sessionId, groupJid, [...new Set(jids)]],
    );
  }

  /** Members left or were removed; the count never goes below zero. */
  async removeParticipants(sessionId: string, groupJid: string, jids: string[]): Promise<void> {
    await this.db.query(
      `UPDATE groups SET
         members = CASE WHEN members IS NULL THEN NULL ELSE ARRAY(SELECT m FROM unnest(members) m WHERE m <> ALL($3::text[])) END,
         participants = CASE WHEN members IS NULL THEN GREATEST(participants - cardinality($3::text[]), 0)
                             ELSE (SELECT count(*)::int FROM unnest(members) m WHERE m <> ALL($3::text[])) END,
         updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [sessionId, groupJid, [...new Set(jids)]],
    );
  }

  /** The group with its members, or null when the session does not know it or only knows its member count. */
  async metadataOf(sessionId: string, groupJid: string): Promise<GroupFacts | null> {
    const rows: GroupMetadataRow[] = await this.db.query(
      `SELECT group_jid, subject, description, owner_jid, members, is_announce, is_locked
       FROM groups WHERE session_id = $1 AND group_jid = $2 AND members IS NOT NULL`,
      [sessionId, groupJid],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      groupJid: r.group_jid,
      subject: r.subject,
      description: r.description,
      ownerJid: r.owner_jid,
      participants: r.members,
      isAnnounce: r.is_announce,
      isLocked: r.is_locked,
    };
  }

  async pageOfSession(organizationId: string, sessionId: string, page: PageRequest): Promise<RowPage<Group>> {
    return keysetPage(this.db.getRepository(Group), { sessionId, organizationId }, page);
  }
}
