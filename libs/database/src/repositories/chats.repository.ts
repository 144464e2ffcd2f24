import { Injectable } from '@nestjs/common';
import type { ChatChanges, ChatState } from '@app/contracts';
import { Db, type Queryable, type Tx } from '../pg';
import type { SessionScopeWithOrganization } from './session-scope';
import type { OwnedSession } from './sessions.repository';

/** A row of `chats`: one conversation of a session (CONTRACT 12). */
export interface ChatRow extends ChatState {
  sessionId: string;
  organizationId: string;
  jid: string;
  /** the name stored on the chat itself (the phone's chat name, a group's subject): what chat updates compare */
  name: string | null;
  /**
   * The name a person reads (the API's `name`): a group's stored name or subject; a person's chat, the name the
   * account's address book gives the contact, else the phone's chat name, else the contact's push name.
   */
  displayName: string | null;
  isGroup: boolean;
  unreadCount: number;
  lastMessageId: string | null;
  /** epoch ms of the newest message; null for a chat the network named without messages */
  lastMessageAt: number | null;
  /** ids of the WhatsApp Business labels the chat carries, sorted (the network's label associations) */
  labels: string[];
  updatedAt: number;
}

/** What a chat update or a history sync says about a chat: the fields it knows. */
export type ChatFacts = { jid: string } & ChatChanges;

/** A keyset page of chats, most recent first; `nextCursor` is opaque (base64url). */
export interface ChatPage {
  rows: ChatRow[];
  nextCursor: string | null;
}

const COLUMNS = `session_id, organization_id, jid, name, is_group, unread_count, archived, pinned, muted_until,
  last_message_id, last_message_at, labels, updated_at`;

interface RawRow {
  session_id: string;
  organization_id: string;
  jid: string;
  name: string | null;
  is_group: boolean;
  unread_count: number;
  archived: boolean;
  pinned: boolean;
  muted_until: Date | null;
  last_message_id: string | null;
  last_message_at: Date | null;
  labels: string[];
  updated_at: Date;
  /** only from VIEW_FROM's select */
  display_name?: string | null;
}

const toRow = (r: RawRow): ChatRow => ({
  sessionId: r.session_id,
  organizationId: r.organization_id,
  jid: r.jid,
  name: r.name,
  displayName: r.display_name === undefined ? r.name : r.display_name,
  isGroup: r.is_group,
  unreadCount: r.unread_count,
  archived: r.archived,
  pinned: r.pinned,
  mutedUntil: r.muted_until ? r.muted_until.getTime() : null,
  lastMessageId: r.last_message_id,
  lastMessageAt: r.last_message_at ? r.last_message_at.getTime() : null,
  labels: [...r.labels].sort(),
  updatedAt: r.updated_at.getTime(),
});

/**
 * `chats` as the API shows them (alias `c`): each row with the name a person reads. A person's chat takes its contact's
 * saved name, the phone's chat name, the push name, then a business's verified name (the contact row by its number's
 * jid first, else by its LID); a group its stored name, else the subject of the stored group. Both lookups are
 * unique-index probes.
 */
const VIEW_COLUMNS = `${COLUMNS.split(',').map((col) => `c.${col.trim()}`).join(', ')},
  CASE WHEN c.is_group THEN COALESCE(c.name, g.subject) ELSE COALESCE(ct.name, c.name, ct.push_name, ct.verified_name) END AS display_name`;
const VIEW_FROM = `chats c
  LEFT JOIN LATERAL (
    SELECT k.name, k.push_name, k.verified_name FROM contacts k
     WHERE NOT c.is_group AND k.session_id = c.session_id AND (k.jid = c.jid OR k.lid = c.jid)
     ORDER BY k.jid = c.jid DESC LIMIT 1
  ) ct ON true
  LEFT JOIN groups g ON c.is_group AND g.session_id = c.session_id AND g.group_jid = c.jid`;

/** The state fields a change may carry, with their columns. */
const STATE_COLUMNS = {
  archived: 'archived',
  pinned: 'pinned',
  mutedUntil: 'muted_until',
  unreadCount: 'unread_count',
  name: 'name',
} as const satisfies Record<keyof ChatChanges, string>;

/** PostgreSQL text cannot hold NUL, but a name on the network can. */
const storable = (text: string | null | undefined) => (typeof text === 'string' ? text.replace(/\0/g, '') : (text ?? null));

const isGroupJid = (jid: string) => jid.endsWith('@g.us');

/**
 * The chat of a message a statement has just inserted, kept current by that same statement (one statement per
 * message, no round trip of its own): `MessagesRepository` composes it as a step of its insert's CTE. `messageCte` is
 * the name of the step that returned the inserted message (columns organization_id, session_id, chat_jid, id,
 * created_at); `unread` a boolean SQL expression: whether the message adds one to the chat's unread count. Inserting
 * nothing (a re-delivery) changes nothing. The newest message (by created_at) stays the chat's last one, so a message
 * of an older history batch does not replace a live one.
 */
export function chatOfMessageSql(messageCte: string, unread: string): string {
  return `INSERT INTO chats AS c (session_id, organization_id, jid, is_group, unread_count, last_message_id, last_message_at)
    SELECT session_id, organization_id, chat_jid, chat_jid LIKE '%@g.us', CASE WHEN ${unread} THEN 1 ELSE 0 END, id, created_at FROM ${messageCte}
    ON CONFLICT (session_id, jid) DO UPDATE SET
      unread_count = c.unread_count + EXCLUDED.unread_count,
      last_message_id = CASE WHEN c.last_message_at IS NULL OR EXCLUDED.last_message_at >= c.last_message_at THEN EXCLUDED.last_message_id ELSE c.last_message_id END,
      last_message_at = GREATEST(c.last_message_at, EXCLUDED.last_message_at),
      updated_at = now()`;
}

/** Where a page of chats ends: its last chat's `last_message_at` in microseconds since the epoch (text), and jid. */
export interface ChatCursor {
  atMicros: string | null;
  jid: string;
}

function encodeCursor(cursor: ChatCursor): string {
  return Buffer.from(JSON.stringify([cursor.atMicros, cursor.jid]), 'utf8').toString('base64url');
}

/** null for a cursor this repository did not make (the caller answers 422). */
export function decodeChatCursor(cursor: string): ChatCursor | null {
  try {
    const [at, jid] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if ((at !== null && !(typeof at === 'string' && /^-?\d{1,19}$/.test(at))) || typeof jid !== 'string') return null;
    return { atMicros: at, jid };
  } catch {
    return null;
  }
}

/** Every query of `chats` (the per-message upkeep is `chatOfMessageSql`, composed by MessagesRepository). */
@Injectable()
export class ChatsRepository {
  constructor(private readonly db: Db) {}

  private q(manager?: Tx): Queryable {
    return manager ?? this.db;
  }

  /**
   * Most recent first (chats without messages last), keyset by (last_message_at, jid). The cursor carries the
   * timestamp in PostgreSQL's own microseconds: the messages of one group commit share a `created_at`, and a cursor
   * rounded to the millisecond would skip the rest of a tie.
   */
  async page(session: OwnedSession, limit: number, cursor?: ChatCursor): Promise<ChatPage> {
    const params: unknown[] = [session.id, limit + 1];
    let after = '';
    if (cursor) {
      params.push(cursor.jid);
      if (cursor.atMicros === null) {
        after = `AND c.last_message_at IS NULL AND c.jid < $3`;
      } else {
        params.push(cursor.atMicros);
        const at = `(timestamptz 'epoch' + $4::bigint * interval '1 microsecond')`;
        after = `AND (c.last_message_at < ${at} OR (c.last_message_at = ${at} AND c.jid < $3) OR c.last_message_at IS NULL)`;
      }
    }
    const rows = await this.db.query<(RawRow & { at_micros: string | null })>(
      `SELECT ${VIEW_COLUMNS}, (EXTRACT(EPOCH FROM c.last_message_at) * 1000000)::bigint::text AS at_micros
         FROM ${VIEW_FROM} WHERE c.session_id = $1 ${after}
        ORDER BY c.last_message_at DESC NULLS LAST, c.jid DESC LIMIT $2`,
      params,
    );
    const more = rows.length > limit;
    const slice = more ? rows.slice(0, limit) : rows;
    const last = slice[slice.length - 1];
    return { rows: slice.map(toRow), nextCursor: more ? encodeCursor({ atMicros: last.at_micros, jid: last.jid }) : null };
  }

  async find(sessionId: string, jid: string, manager?: Tx): Promise<ChatRow | null> {
    const rows = await this.q(manager).query<RawRow>(`SELECT ${VIEW_COLUMNS} FROM ${VIEW_FROM} WHERE c.session_id = $1 AND c.jid = $2`, [sessionId, jid]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * Applies what is known of a chat (an API action's outcome, the phone's change, a chat the network named) and
   * answers the fields that really changed (empty: nothing did) with the row after it. A chat not stored yet is
   * created (a new chat's changes are the fields given that differ from a fresh chat's defaults). Run it in the
   * transaction that writes the `chat.update` announcing it.
   */
  async apply(session: SessionScopeWithOrganization, facts: ChatFacts, manager?: Tx): Promise<{ row: ChatRow; changes: ChatChanges }> {
    const { id: sessionId, organizationId } = session;
    const q = this.q(manager);
    await q.query(
      `INSERT INTO chats (session_id, organization_id, jid, is_group) VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, jid) DO NOTHING`,
      [sessionId, organizationId, facts.jid, isGroupJid(facts.jid)],
    );
    const before = (await q.query(`SELECT ${COLUMNS} FROM chats WHERE session_id = $1 AND jid = $2 FOR UPDATE`, [sessionId, facts.jid])) as RawRow[];
    const old = toRow(before[0]);
    const changes: ChatChanges = {};
    const sets: string[] = [];
    const params: unknown[] = [sessionId, facts.jid];
    for (const [field, column] of Object.entries(STATE_COLUMNS) as Array<[keyof ChatChanges, string]>) {
      if (!(field in facts) || facts[field] === undefined) continue;
      const value = field === 'name' ? storable(facts.name) : facts[field];
      if (value === old[field]) continue;
      (changes as Record<string, unknown>)[field] = value;
      params.push(field === 'mutedUntil' && value !== null ? new Date(value as number) : value);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length) await q.query(`UPDATE chats SET ${sets.join(', ')}, updated_at = now() WHERE session_id = $1 AND jid = $2`, params);
    return { row: (await this.find(sessionId, facts.jid, manager))!, changes };
  }

  /**
   * The network added a label to a chat (`assigned` true) or took it off. A chat not stored yet is created; a label it
   * already carried (or did not) changes nothing, not even its `updated_at`.
   */
  async setLabel(organizationId: string, sessionId: string, jid: string, labelId: string, assigned: boolean, manager?: Tx): Promise<void> {
    const q = this.q(manager);
    if (assigned) {
      await q.query(
        `INSERT INTO chats AS c (session_id, organization_id, jid, is_group, labels) VALUES ($1, $2, $3, $4, ARRAY[$5::text])
         ON CONFLICT (session_id, jid) DO UPDATE SET labels = array_append(c.labels, $5::text), updated_at = now()
           WHERE NOT ($5::text = ANY (c.labels))`,
        [sessionId, organizationId, jid, isGroupJid(jid), labelId],
      );
    } else {
      await q.query(
        `UPDATE chats SET labels = array_remove(labels, $3::text), updated_at = now()
          WHERE session_id = $1 AND jid = $2 AND $3::text = ANY (labels)`,
        [sessionId, jid, labelId],
      );
    }
  }

  /** A label was deleted on the account: no chat of the session carries it any more. */
  async dropLabel(sessionId: string, labelId: string, manager?: Tx): Promise<void> {
    await this.q(manager).query(
      `UPDATE chats SET labels = array_remove(labels, $2::text), updated_at = now()
        WHERE session_id = $1 AND $2::text = ANY (labels)`,
      [sessionId, labelId],
    );
  }

  /**
   * The chats of one history sync batch, in one statement: a chat's name, state and unread count as the phone sent
   * them (the phone is the authority on a chat at pairing time); a name the phone did not send keeps the stored one.
   */
  async applyHistory(organizationId: string, sessionId: string, chats: Array<ChatState & { jid: string; name: string | null; unreadCount: number }>, manager?: Tx): Promise<number> {
    // one row per chat: an upsert cannot touch a row twice
    chats = [...new Map(chats.map((c) => [c.jid, c])).values()];
    if (!chats.length) return 0;
    const rows = await this.q(manager).query<{ jid: string }>(
      `INSERT INTO chats AS c (session_id, organization_id, jid, is_group, name, unread_count, archived, pinned, muted_until)
       SELECT $1, $2, h.jid, h.jid LIKE '%@g.us', h.name, h.unread_count, h.archived, h.pinned, h.muted_until
         FROM unnest($3::text[], $4::text[], $5::int[], $6::boolean[], $7::boolean[], $8::timestamptz[])
           AS h(jid, name, unread_count, archived, pinned, muted_until)
       ON CONFLICT (session_id, jid) DO UPDATE SET
         name = COALESCE(EXCLUDED.name, c.name), unread_count = EXCLUDED.unread_count, archived = EXCLUDED.archived,
         pinned = EXCLUDED.pinned, muted_until = EXCLUDED.muted_until, updated_at = now()
       RETURNING c.jid`,
      [
        sessionId,
        organizationId,
        chats.map((c) => c.jid),
        chats.map((c) => storable(c.name)),
        chats.map((c) => Math.max(0, Math.trunc(c.unreadCount))),
        chats.map((c) => c.archived),
        chats.map((c) => c.pinned),
        chats.map((c) => (c.mutedUntil === null ? null : new Date(c.mutedUntil))),
      ],
    );
    return rows.length;
  }
}
