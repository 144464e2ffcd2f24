import { Injectable } from '@nestjs/common';
import type { GroupNetwork, GroupNetworkParticipant } from '@app/contracts';
import { newId } from '../ids';
import { Group } from '../entities/group.entity';
import { Db, EntityTable } from '../pg';
import { keysetPage, PageRequest, RowPage } from './keyset-page';
import type { SessionScope } from './session-scope';
import type { OwnedSession } from './sessions.repository';

const GROUPS = new EntityTable(Group);

/**
 * A group as the network describes it, members listed (the `participants` column counts them). `network` is the
 * group as the network addresses it (what a send needs); absent or null when the source did not say.
 */
export type GroupFacts = Pick<Group, 'groupJid' | 'subject' | 'description' | 'ownerJid' | 'isAnnounce' | 'isLocked'> & {
  participants: string[];
  network?: GroupNetwork | null;
  /** members who are admins (super admins included) and super admins; absent: the stored ones are kept */
  admins?: string[];
  superAdmins?: string[];
};

/** A group as the network described it in full (a fresh read): members with their rights, and its picture. */
export type GroupRefresh = Omit<GroupFacts, 'network' | 'admins' | 'superAdmins'> & {
  admins: string[];
  superAdmins: string[];
  pictureUrl: string | null;
};

/** A stored group with what administration keeps: rights, picture, and when the network last described it. */
export type StoredGroup = GroupRefresh & {
  /** members as counted (a row from before member lists were kept counts members it cannot name) */
  participantCount: number;
  /** epoch ms of the last full description from the network; null when never refreshed that way */
  refreshedAt: number | null;
};

interface StoredGroupRow {
  group_jid: string;
  subject: string;
  description: string;
  owner_jid: string;
  participants: number;
  members: string[] | null;
  is_announce: boolean;
  is_locked: boolean;
  admins: string[];
  super_admins: string[];
  picture_url: string | null;
  refreshed_at: Date | null;
}

interface GroupMetadataRow {
  group_jid: string;
  subject: string;
  description: string;
  owner_jid: string;
  members: string[];
  is_announce: boolean;
  is_locked: boolean;
  network: GroupNetwork | null;
}

/** PostgreSQL text cannot hold NUL, but a name on the network can: it is dropped rather than failing the write. */
const storable = <T extends string | null | undefined>(text: T): T => (typeof text === 'string' ? (text.replace(/\0/g, '') as T) : text);

/** Every form a member goes by (LID and phone number): a member event may name it by either. */
const formsOf = (jids: string[], network: GroupNetworkParticipant[] | undefined): string[] => {
  const forms = new Set(jids);
  for (const p of network ?? []) for (const form of [p.id, p.phoneNumber, p.lid]) if (form) forms.add(form);
  return [...forms];
};

/** One entry per id, the last one given winning. */
const uniqueById = (participants: GroupNetworkParticipant[]): GroupNetworkParticipant[] => [...new Map(participants.map((p) => [p.id, p])).values()];

const networkJson = (network: GroupNetwork | null | undefined): string | null =>
  network ? JSON.stringify({ ...network, participants: uniqueById(network.participants) }) : null;

/**
 * The members of a network form (`network`, a jsonb expression) whose `admin` is one of `ranks` (SQL literals), each
 * by its phone-number JID when it has one (the form the member list uses), else by its id.
 */
const adminsOf = (network: string, ranks: string) =>
  `ARRAY(SELECT CASE WHEN p->>'id' LIKE '%@s.whatsapp.net' THEN p->>'id' ELSE COALESCE(p->>'phoneNumber', p->>'id') END
         FROM jsonb_array_elements(${network}->'participants') AS e(p) WHERE p->>'admin' IN (${ranks}))`;

/** True when a stored network participant `p` goes by one of the forms in `$forms` (a text[] parameter). */
const goesBy = (forms: string) => `ARRAY[p->>'id', p->>'phoneNumber', p->>'lid'] && ${forms}::text[]`;

/** The stored network participants rebuilt in their order from `item` (an expression over `p`), `where` filtering. */
const rebuiltParticipants = (item: string, where = 'true') =>
  `COALESCE((SELECT jsonb_agg(${item} ORDER BY i) FROM jsonb_array_elements(network->'participants') WITH ORDINALITY AS e(p, i) WHERE ${where}), '[]'::jsonb)`;

/**
 * Owner of the `groups` table. `members` is the member list when known (NULL on rows stored before the list was
 * kept: those only move their count until the network refreshes them). `network` is the group exactly as the network
 * addresses it (`{addressingMode?, participants: [{id, phoneNumber?, lid?, admin?}]}`, answered to Baileys for group
 * sends), NULL when not known that way: member changes keep it current where they can and forget it where they cannot,
 * so it is never a guess.
 */
@Injectable()
export class GroupsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the group, or refreshes what the network says of it when the session already knows it. A refresh without
   * a network form (the simulator) forgets the stored one: it described another member list.
   */
  async upsert(organizationId: string, sessionId: string, g: GroupFacts): Promise<void> {
    const members = [...new Set(g.participants)];
    await this.db.query(
      `INSERT INTO groups (id, organization_id, session_id, group_jid, subject, description, owner_jid, participants, members, is_announce, is_locked, network,
         admins, super_admins)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, COALESCE($13::text[], '{}'), COALESCE($14::text[], '{}'))
       ON CONFLICT (session_id, group_jid) DO UPDATE SET subject = EXCLUDED.subject, description = EXCLUDED.description,
         owner_jid = EXCLUDED.owner_jid, participants = EXCLUDED.participants, members = EXCLUDED.members,
         is_announce = EXCLUDED.is_announce, is_locked = EXCLUDED.is_locked, network = EXCLUDED.network,
         admins = COALESCE($13::text[], groups.admins), super_admins = COALESCE($14::text[], groups.super_admins), updated_at = now()`,
      [
        newId('grp'), organizationId, sessionId, g.groupJid, storable(g.subject), storable(g.description), storable(g.ownerJid),
        members.length, members, g.isAnnounce, g.isLocked, networkJson(g.network), g.admins ?? null, g.superAdmins ?? null,
      ],
    );
  }

  /**
   * The group as a fresh read from the network described it (`GET …/groups/{groupJid}`, an administration answer):
   * everything but the network form, which is kept while the member list is the same (it addresses the same
   * members) and forgotten otherwise, so a send asks the network rather than miss a member. `refreshed_at` is now.
   */
  async refresh(session: OwnedSession, g: GroupRefresh): Promise<void> {
    const members = [...new Set(g.participants)];
    await this.db.query(
      `INSERT INTO groups (id, organization_id, session_id, group_jid, subject, description, owner_jid, participants, members, is_announce, is_locked,
         admins, super_admins, picture_url, refreshed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, now())
       ON CONFLICT (session_id, group_jid) DO UPDATE SET subject = EXCLUDED.subject, description = EXCLUDED.description,
         owner_jid = EXCLUDED.owner_jid, participants = EXCLUDED.participants,
         network = CASE WHEN groups.members IS NOT NULL AND groups.members @> EXCLUDED.members AND groups.members <@ EXCLUDED.members
                        THEN groups.network ELSE NULL END,
         members = EXCLUDED.members, is_announce = EXCLUDED.is_announce, is_locked = EXCLUDED.is_locked,
         admins = EXCLUDED.admins, super_admins = EXCLUDED.super_admins, picture_url = EXCLUDED.picture_url,
         refreshed_at = now(), updated_at = now()`,
      [
        newId('grp'), session.organizationId, session.id, g.groupJid, storable(g.subject), storable(g.description), storable(g.ownerJid),
        members.length, members, g.isAnnounce, g.isLocked, [...new Set(g.admins)], [...new Set(g.superAdmins)], storable(g.pictureUrl),
      ],
    );
  }

  /** The session's stored group with its rights and picture, or null when the session does not know it. */
  async storedOf(session: SessionScope, groupJid: string): Promise<StoredGroup | null> {
    const rows = await this.db.query<StoredGroupRow>(
      `SELECT group_jid, subject, description, owner_jid, participants, members, is_announce, is_locked, admins, super_admins, picture_url, refreshed_at
       FROM groups WHERE session_id = $1 AND group_jid = $2`,
      [session.id, groupJid],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      groupJid: r.group_jid,
      subject: r.subject,
      description: r.description,
      ownerJid: r.owner_jid,
      participants: r.members ?? [],
      participantCount: r.participants,
      isAnnounce: r.is_announce,
      isLocked: r.is_locked,
      admins: r.admins,
      superAdmins: r.super_admins,
      pictureUrl: r.picture_url,
      refreshedAt: r.refreshed_at ? r.refreshed_at.getTime() : null,
    };
  }

  /** The next read of the group asks the network again (a change whose outcome only the network can tell: a picture). */
  async expire(session: OwnedSession, groupJid: string): Promise<void> {
    await this.db.query('UPDATE groups SET refreshed_at = NULL WHERE session_id = $1 AND group_jid = $2', [session.id, groupJid]);
  }

  /** The session's account left the group (or was removed): the session no longer holds it. */
  async forget(session: OwnedSession, groupJid: string): Promise<void> {
    await this.db.query('DELETE FROM groups WHERE session_id = $1 AND group_jid = $2', [session.id, groupJid]);
  }

  /**
   * An admin changed the group on the network; only the named fields change. `network`, when the network described
   * the whole group (a refresh), replaces the stored network form and says who the admins are (by number when the
   * network told it, as the member list names them); the member list is left to the member events.
   */
  async applyChanges(
    sessionId: string,
    groupJid: string,
    changes: Partial<Pick<Group, 'subject' | 'description' | 'isAnnounce' | 'isLocked'>>,
    network?: GroupNetwork,
  ): Promise<void> {
    await this.db.query(
      `UPDATE groups SET subject = COALESCE($3, subject), description = COALESCE($4, description),
         is_announce = COALESCE($5, is_announce), is_locked = COALESCE($6, is_locked), network = COALESCE($7::jsonb, network),
         admins = CASE WHEN $7::jsonb IS NULL THEN admins ELSE ${adminsOf('$7::jsonb', "'admin', 'superadmin'")} END,
         super_admins = CASE WHEN $7::jsonb IS NULL THEN super_admins ELSE ${adminsOf('$7::jsonb', "'superadmin'")} END,
         updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [
        sessionId, groupJid, storable(changes.subject) ?? null, storable(changes.description) ?? null, changes.isAnnounce ?? null, changes.isLocked ?? null,
        networkJson(network),
      ],
    );
  }

  /**
   * Members joined; a member already listed is not counted twice. `network` is how the network named them in the
   * group: they join the stored network form (replacing an entry under any of their forms). Without it the stored
   * network form can no longer be complete and is forgotten.
   */
  async addParticipants(session: SessionScope, groupJid: string, jids: string[], network?: GroupNetworkParticipant[]): Promise<void> {
    await this.db.query(
      `UPDATE groups SET
         members = CASE WHEN members IS NULL THEN NULL ELSE ARRAY(SELECT DISTINCT unnest(members || $3::text[]) ORDER BY 1) END,
         participants = CASE WHEN members IS NULL THEN participants + cardinality($3::text[])
                             ELSE (SELECT count(DISTINCT m)::int FROM unnest(members || $3::text[]) m) END,
         network = CASE WHEN network IS NULL OR $5::jsonb IS NULL THEN NULL
                        ELSE jsonb_set(network, '{participants}', ${rebuiltParticipants('p', `NOT ${goesBy('$4')}`)} || $5::jsonb) END,
         updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [session.id, groupJid, [...new Set(jids)], formsOf(jids, network), network ? JSON.stringify(uniqueById(network)) : null],
    );
  }

  /**
   * Members left or were removed; the count never goes below zero. They leave the stored network form under any of
   * their forms (the numbers in `jids`, and the ids, numbers and LIDs of `network` when the network named them).
   */
  async removeParticipants(session: SessionScope, groupJid: string, jids: string[], network?: GroupNetworkParticipant[]): Promise<void> {
    await this.db.query(
      `UPDATE groups SET
         members = CASE WHEN members IS NULL THEN NULL ELSE ARRAY(SELECT m FROM unnest(members) m WHERE m <> ALL($3::text[])) END,
         participants = CASE WHEN members IS NULL THEN GREATEST(participants - cardinality($3::text[]), 0)
                             ELSE (SELECT count(*)::int FROM unnest(members) m WHERE m <> ALL($3::text[])) END,
         network = CASE WHEN network IS NULL THEN NULL
                        ELSE jsonb_set(network, '{participants}', ${rebuiltParticipants('p', `NOT ${goesBy('$4')}`)}) END,
         admins = ARRAY(SELECT a FROM unnest(admins) a WHERE a <> ALL($3::text[])),
         super_admins = ARRAY(SELECT a FROM unnest(super_admins) a WHERE a <> ALL($3::text[])),
         updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [session.id, groupJid, [...new Set(jids)], formsOf(jids, network)],
    );
  }

  /**
   * Members were promoted (`admin`) or demoted (null): the admin list and the stored network form (Baileys' `admin`)
   * record it; the member list and its count do not change. A super admin (the creator) stays one.
   */
  async setParticipantsAdmin(
    session: SessionScope,
    groupJid: string,
    jids: string[],
    admin: 'admin' | 'superadmin' | null,
    network?: GroupNetworkParticipant[],
  ): Promise<void> {
    await this.db.query(
      `UPDATE groups SET
         network = CASE WHEN network IS NULL THEN NULL ELSE
           jsonb_set(network, '{participants}', ${rebuiltParticipants(`CASE WHEN ${goesBy('$3')} THEN p || jsonb_build_object('admin', $4::text) ELSE p END`)}) END,
         admins = CASE WHEN $4::text IS NULL THEN ARRAY(SELECT a FROM unnest(admins) a WHERE a <> ALL($5::text[]) OR a = ANY(super_admins))
                       ELSE ARRAY(SELECT DISTINCT unnest(admins || $5::text[])) END,
         updated_at = now()
       WHERE session_id = $1 AND group_jid = $2`,
      [session.id, groupJid, formsOf(jids, network), admin, [...new Set(jids)]],
    );
  }

  /**
   * The group with its members (and its network form, null when not known), or null when the session does not know
   * it or only knows its member count.
   */
  async metadataOf(sessionId: string, groupJid: string): Promise<GroupFacts | null> {
    const rows = await this.db.query<GroupMetadataRow>(
      `SELECT group_jid, subject, description, owner_jid, members, is_announce, is_locked, network
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
      network: r.network ?? null,
    };
  }

  async pageOfSession(session: OwnedSession, page: PageRequest): Promise<RowPage<Group>> {
    return keysetPage(this.db, GROUPS, 'session_id = $1 AND organization_id = $2', [session.id, session.organizationId], page);
  }
}
