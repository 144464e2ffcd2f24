import { Injectable } from '@nestjs/common';
import type { MediaRef } from '@app/contracts';
import type { SessionScope } from './session-scope';
import { autoReadSql, type OwnedSession } from './sessions.repository';
import { chatOfMessageSql } from './chats.repository';
import { campaignMediaSql } from './campaigns.repository';
import { EditedMessage, json, MESSAGE_COLUMNS, MessageFilter, MessageRawRow, MessageRow, NewMessage, toMessageRow, ts, updatedRow } from './message-rows';
import { Db, type Tx } from '../pg';

/**
 * The message log (`messages` and `message_media`): what a session received and sent, read by id, page and network id,
 * and what the network changes on a stored message (edits, reactions, votes, deletes). The send queue is
 * `MessageQueueRepository`'s, the receipts `MessageAcksRepository`'s; the rows' shapes are in message-rows.ts.
 */
@Injectable()
export class MessagesRepository {
  constructor(private readonly db: Db) {}

  /**
   * The organization's messages stored per hour since `since` (epoch ms, an hour's start): received (inbound) and sent
   * (outbound, counted when accepted), history syncs left out. Hours without any are absent. One range scan of the
   * partial index `messages_org_recent` (organization_id, created_at) INCLUDE (direction).
   */
  async hourlyCounts(organizationId: string, since: number): Promise<Array<{ hour: number; received: number; sent: number }>> {
    const rows = await this.db.query<{ hour: Date; received: number; sent: number }>(
      `SELECT date_trunc('hour', created_at) AS hour,
              count(*) FILTER (WHERE direction = 'in')::int AS received,
              count(*) FILTER (WHERE direction = 'out')::int AS sent
         FROM messages
        WHERE organization_id = $1 AND created_at >= $2 AND NOT from_history
        GROUP BY 1`,
      [organizationId, new Date(since)],
    );
    return rows.map((r) => ({ hour: r.hour.getTime(), received: r.received, sent: r.sent }));
  }

  /**
   * Inserts a message; a conflicting (session, waMessageId) or (session, idempotency key) inserts nothing and
   * returns null, so the caller can tell a re-delivery or a repeat from a new message.
   */
  async insert(m: NewMessage, manager?: Tx): Promise<MessageRow | null> {
    // the message's chat is kept current by the same statement (ChatsRepository's fragment): a received message counts
    // as unread unless it came from a history sync or the session marks what it receives read (autoRead)
    const rows = await (manager ?? this.db).query<MessageRawRow>(
      `WITH m AS (
         INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, text, media,
           media_ref, location, contact, poll, reaction, quoted_message_id, quoted_wa_message_id, mentions, status,
           idempotency_key, raw, created_at, updated_at, sent_at, seq, from_history)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
           COALESCE($22, now()), COALESCE($22, now()), $23, $24, $25)
         ON CONFLICT DO NOTHING
         RETURNING ${MESSAGE_COLUMNS}
       ),
       chat AS (${chatOfMessageSql('m', `$26::boolean AND NOT COALESCE(${autoReadSql('$3')}, false)`)})
       SELECT * FROM m`,
      [
        m.id, m.organizationId, m.sessionId, m.waMessageId, m.direction, m.chatJid, m.from, m.type, m.text ?? null,
        json(m.media), json(m.mediaRef), json(m.location), json(m.contact), json(m.poll), json(m.reaction),
        m.quotedMessageId ?? null, m.quotedWaMessageId ?? null, m.mentions ?? [], m.status, m.idempotencyKey ?? null,
        m.raw ? Buffer.from(m.raw) : null, ts(m.createdAt), ts(m.sentAt), m.seq ?? null, m.fromHistory ?? false,
        m.direction === 'in' && !m.fromHistory,
      ],
    );
    return rows[0] ? toMessageRow(rows[0]) : null;
  }

  /** The messages first accepted under these keys in the last `windowMs` (a batch's repeats), by key. */
  async findByIdempotencyKeys(session: OwnedSession, keys: string[], windowMs: number): Promise<Map<string, MessageRow>> {
    if (keys.length === 0) return new Map();
    const rows = await this.db.query<MessageRawRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND idempotency_key = ANY($2::text[]) AND created_at > now() - ($3 * interval '1 millisecond')`,
      [session.id, keys, windowMs],
    );
    return new Map(rows.map((r) => [r.idempotency_key!, toMessageRow(r)]));
  }

  /** Frees the keys whose window has passed, so they can be used again (one statement for a batch's keys). */
  async releaseIdempotencyKeys(session: OwnedSession, keys: string[], windowMs: number): Promise<void> {
    if (keys.length === 0) return;
    await this.db.query(
      `UPDATE messages SET idempotency_key = NULL WHERE session_id = $1 AND idempotency_key = ANY($2::text[]) AND created_at <= now() - ($3 * interval '1 millisecond')`,
      [session.id, keys, windowMs],
    );
  }

  /**
   * An outbound message's bytes: its own (`message_media`), or, for a message of a media campaign, its campaign's,
   * stored once for every recipient (`campaign_media`, the campaigns repository's fragment).
   */
  async mediaOf(messageId: string): Promise<Buffer | null> {
    const rows = await this.db.query<{ data: Buffer }>(
      `SELECT data FROM message_media WHERE message_id = $1
       UNION ALL ${campaignMediaSql('(SELECT campaign_id FROM messages WHERE id = $1)')}
       LIMIT 1`,
      [messageId],
    );
    return rows[0]?.data ?? null;
  }

  /** The message `id` of the caller's session (another session's, or another organization's, is not found). */
  async findInSession(session: OwnedSession, id: string): Promise<MessageRow | null> {
    const rows = await this.db.query<MessageRawRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1 AND session_id = $2 AND organization_id = $3`,
      [id, session.id, session.organizationId],
    );
    return rows[0] ? toMessageRow(rows[0]) : null;
  }

  async findById(id: string): Promise<MessageRow | null> {
    const rows = await this.db.query<MessageRawRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1`, [id]);
    return rows[0] ? toMessageRow(rows[0]) : null;
  }

  async findByWaId(sessionId: string, waMessageId: string): Promise<MessageRow | null> {
    const rows = await this.db.query<MessageRawRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND wa_message_id = $2`, [
      sessionId,
      waMessageId,
    ]);
    return rows[0] ? toMessageRow(rows[0]) : null;
  }

  /** Our ids of the given network ids in one session (quotes, reactions, polls resolve through it). */
  async idsByWaIds(sessionId: string, waMessageIds: string[]): Promise<Map<string, string>> {
    if (waMessageIds.length === 0) return new Map();
    const rows = await this.db.query<{ id: string; wa_message_id: string }>(
      `SELECT id, wa_message_id FROM messages WHERE session_id = $1 AND wa_message_id = ANY($2)`,
      [sessionId, waMessageIds],
    );
    return new Map(rows.map((r) => [r.wa_message_id, r.id]));
  }

  /** The stored network content of a message (Baileys' getMessage, quotes, poll decryption). */
  async rawOf(sessionId: string, waMessageId: string): Promise<Uint8Array | null> {
    const rows = await this.db.query<{ raw: Buffer | null }>(
      `SELECT raw FROM messages WHERE session_id = $1 AND wa_message_id = $2`,
      [sessionId, waMessageId],
    );
    return rows[0]?.raw ?? null;
  }

  /** The messages of one session with these ids (a chat list's last messages), in no particular order. */
  async findByIds(session: OwnedSession, ids: string[]): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<MessageRawRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND id = ANY($2)`, [session.id, ids]);
    return rows.map(toMessageRow);
  }

  /** Newest first, keyset-paginated by id. */
  async page(session: SessionScope, filter: MessageFilter, limit: number, cursor?: string): Promise<MessageRow[]> {
    const where = ['session_id = $1'];
    const params: unknown[] = [session.id];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.direction) add('direction = ?', filter.direction);
    if (filter.chatJid) add('chat_jid = ?', filter.chatJid);
    if (filter.status) add('status = ?', filter.status);
    if (cursor) add('id < ?', cursor);
    params.push(limit);
    const rows = await this.db.query<MessageRawRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(toMessageRow);
  }

  /**
   * An edit from the network: the text of a text message, the caption of a media message. null when there is nothing
   * to change: an unknown message, a revoked one, or the same text again (a re-delivered edit publishes nothing twice).
   */
  async applyEdit(session: SessionScope, waMessageId: string, text: string, manager?: Tx): Promise<EditedMessage | null> {
    const rows = await (manager ?? this.db).query<MessageRawRow & { previous_text: string | null }>(
      `WITH old AS (
         SELECT id AS old_id, CASE WHEN media IS NULL THEN text ELSE media->>'caption' END AS previous_text, media IS NULL AS is_text
           FROM messages WHERE session_id = $1 AND wa_message_id = $2 AND revoked_at IS NULL FOR UPDATE
       )
       UPDATE messages SET
           text = CASE WHEN old.is_text THEN $3::text ELSE text END,
           media = CASE WHEN old.is_text THEN media ELSE jsonb_set(media, '{caption}', to_jsonb($3::text)) END,
           edited_at = now(), updated_at = now()
         FROM old WHERE id = old.old_id AND old.previous_text IS DISTINCT FROM $3::text
       RETURNING ${MESSAGE_COLUMNS}, old.previous_text`,
      [session.id, waMessageId, text],
    );
    return rows[0] ? { row: toMessageRow(rows[0]), previousText: rows[0].previous_text } : null;
  }

  /**
   * A reaction to a message of the session: the reactor's earlier reaction replaced, or removed with `""`. null when
   * nothing changed (an unknown message, or the same reaction again: a re-delivered one).
   */
  async applyReaction(sessionId: string, waMessageId: string, from: string, emoji: string, manager?: Tx): Promise<MessageRow | null> {
    return updatedRow(
      (manager ?? this.db),
      `UPDATE messages SET
           reactions = NULLIF(
             COALESCE((SELECT jsonb_agg(r) FROM jsonb_array_elements(COALESCE(reactions, '[]'::jsonb)) r WHERE r->>'from' <> $3), '[]'::jsonb)
               || CASE WHEN $4 = '' THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('from', $3::text, 'emoji', $4::text)) END,
             '[]'::jsonb),
           updated_at = now()
         WHERE session_id = $1 AND wa_message_id = $2
           AND COALESCE((SELECT r->>'emoji' FROM jsonb_array_elements(COALESCE(reactions, '[]'::jsonb)) r WHERE r->>'from' = $3 LIMIT 1), '') <> $4
       RETURNING ${MESSAGE_COLUMNS}`,
      [sessionId, waMessageId, from, emoji],
    );
  }

  /** A vote on a poll of the session: the voter's earlier vote replaced. null: not a stored poll, or the same vote again. */
  async applyPollVote(sessionId: string, pollWaMessageId: string, voter: string, options: string[], manager?: Tx): Promise<MessageRow | null> {
    return updatedRow(
      (manager ?? this.db),
      `UPDATE messages SET
           poll_votes = COALESCE((SELECT jsonb_agg(v) FROM jsonb_array_elements(COALESCE(poll_votes, '[]'::jsonb)) v WHERE v->>'voter' <> $3), '[]'::jsonb)
             || jsonb_build_array(jsonb_build_object('voter', $3::text, 'options', $4::jsonb)),
           updated_at = now()
         WHERE session_id = $1 AND wa_message_id = $2 AND poll IS NOT NULL
           AND (SELECT v->'options' FROM jsonb_array_elements(COALESCE(poll_votes, '[]'::jsonb)) v WHERE v->>'voter' = $3 LIMIT 1) IS DISTINCT FROM $4::jsonb
       RETURNING ${MESSAGE_COLUMNS}`,
      [sessionId, pollWaMessageId, voter, JSON.stringify(options)],
    );
  }

  /** A delete for everyone from the network: the row marked once (null: unknown, or already marked). */
  async markRevoked(session: SessionScope, waMessageId: string, manager?: Tx): Promise<MessageRow | null> {
    return updatedRow(
      (manager ?? this.db),
      `UPDATE messages SET revoked_at = now(), updated_at = now()
        WHERE session_id = $1 AND wa_message_id = $2 AND revoked_at IS NULL RETURNING ${MESSAGE_COLUMNS}`,
      [session.id, waMessageId],
    );
  }

  /**
   * An inbound message's media reference after the sender's phone uploaded the media again (issue 19 item 9): the
   * new CDN path replaces the expired one. Inbound rows only; false when there is no such row.
   */
  async updateMediaRef(id: string, ref: MediaRef): Promise<boolean> {
    const affected = await this.db.affected(
      `UPDATE messages SET media_ref = $2 WHERE id = $1 AND direction = 'in' AND media_ref IS NOT NULL`,
      [id, json(ref)],
    );
    return affected === 1;
  }

  /**
   * The people the session has 1:1 chats with in its log (`…@s.whatsapp.net`), most recent first, at most `limit`:
   * the default audience of a status post (CONTRACT 13, "all contacts").
   */
  async contactChatJids(session: OwnedSession, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ chat_jid: string }>(
      `SELECT chat_jid FROM messages WHERE session_id = $1 AND chat_jid LIKE '%@s.whatsapp.net'
        GROUP BY chat_jid ORDER BY max(created_at) DESC LIMIT $2`,
      [session.id, limit],
    );
    return rows.map((r) => r.chat_jid);
  }
}
