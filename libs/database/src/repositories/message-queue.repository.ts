import { Injectable } from '@nestjs/common';
import type { AckStatus, MessageStatus } from '@app/contracts';
import { pgArray } from '../pg-array';
import { Db, PreparedStatement, type Tx, preparedStatement } from '../pg';
import { OutboxRows, outboxInsertSql } from './events.repository';
import { type OwnedSession, presenceTypingSql, takeMessageSeqsIfSendableSql, takeMessageSeqsSql } from './sessions.repository';
import { chatOfMessageSql } from './chats.repository';
import { json, MESSAGE_COLUMNS, MessageRawRow, MessageRow, NewMessage, QueueHead, SentRecord, toMessageRow, ts, updatedRow } from './message-rows';

/**
 * A scheduled send (CONTRACT 17) is numbered when it becomes due (`promoteDue`), not when it is accepted: its number
 * now would put it ahead of everything accepted before it is due. The accept still takes one (a harmless gap) so it
 * stays the one statement, with the session's checks, that every send goes through.
 */
const SEQ_UNLESS_SCHEDULED = (status: string, seq: string) => `CASE WHEN ${status} = 'scheduled' THEN NULL ELSE ${seq} END`;

/**
 * The accept of a send (`insertOutbound`): number, message and media bytes in one statement. The number comes from
 * the session's counter row through the sessions repository's fragment (`takeMessageSeqsSql`: its SQL stays there,
 * this statement only composes it); the message takes it only when the session row exists, and the media row is written
 * only for a message that was inserted (nothing on a conflict). Every parameter is cast: in an INSERT … SELECT an
 * untyped parameter would be read as text.
 */
const insertOutboundSql = (takeSeq: string, from: string, answer: string) =>
  `WITH s AS (${takeSeq}),
   m AS (
     INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, text, media,
       location, contact, poll, reaction, quoted_message_id, quoted_wa_message_id, mentions, status, idempotency_key, seq, send_options,
       send_at, campaign_id)
     SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, ${from}, $8::text, $9::text, $10::jsonb,
       $11::jsonb, $12::jsonb, $13::jsonb, $14::jsonb, $15::text, $16::text, $17::text[], $18::text, $19::text,
       ${SEQ_UNLESS_SCHEDULED('$18::text', 's.message_seq')}, $21::jsonb, $22::timestamptz, $23::text
       FROM s
     ON CONFLICT DO NOTHING
     RETURNING ${MESSAGE_COLUMNS}
   ),
   media AS (INSERT INTO message_media (message_id, data) SELECT m.id, $20::bytea FROM m WHERE $20::bytea IS NOT NULL),
   chat AS (${chatOfMessageSql('m', 'false')})
   ${answer}`;
const INSERT_OUTBOUND = preparedStatement('messages_insert_outbound', insertOutboundSql(takeMessageSeqsSql('$3::text', '1'), '$7::text', 'SELECT * FROM m'));

/**
 * A bulk accept: the batch's numbers taken at once (`takeSeqs`, a fragment of the sessions' repository returning the
 * last number taken as `message_seq`), then every message of the batch with its number (its position in the arrays),
 * and the media bytes of the inserted ones, in one statement. Arrays, one per column, in the batch's order; json
 * columns travel as text and are cast per element. A conflicting row (waMessageId, idempotency key) inserts nothing
 * and leaves its number unused; the others are inserted all the same. `from` is the sender's expression. `media`:
 * whether the statement stores media bytes at all (see `ByMedia`).
 */
const insertOutboundManySql = (takeSeqs: string, from: string, answer: string, media: boolean, sendAtParam: string) =>
  `WITH s AS (${takeSeqs}),
   b AS (
     SELECT * FROM unnest($1::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
       $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::bytea[],
       $20::text[], ${sendAtParam}::timestamptz[])
       WITH ORDINALITY AS b(id, wa_message_id, chat_jid, type, text, media, location, contact, poll, reaction,
         quoted_message_id, quoted_wa_message_id, mentions, idempotency_key, status, from_jid, data, send_options, send_at, n)
   ),
   m AS (
     INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, text, media,
       location, contact, poll, reaction, quoted_message_id, quoted_wa_message_id, mentions, status, idempotency_key, seq, send_options,
       send_at)
     SELECT b.id, $2::text, $3::text, b.wa_message_id, 'out', b.chat_jid, ${from}, b.type, b.text, b.media::jsonb,
       b.location::jsonb, b.contact::jsonb, b.poll::jsonb, b.reaction::jsonb, b.quoted_message_id, b.quoted_wa_message_id,
       b.mentions::text[], b.status, b.idempotency_key, ${SEQ_UNLESS_SCHEDULED('b.status', 's.message_seq - cardinality($1::text[]) + b.n')},
       b.send_options::jsonb, b.send_at
       FROM b, s ORDER BY b.n
     ON CONFLICT DO NOTHING
     RETURNING ${MESSAGE_COLUMNS}
   ),
   ${media ? 'media AS (INSERT INTO message_media (message_id, data) SELECT m.id, b.data FROM m JOIN b ON b.id = m.id WHERE b.data IS NOT NULL),' : ''}
   -- one chat row change per chat (a statement may not update a row twice): the batch's last message of each chat, by
   -- its order (the rows share created_at, and ids minted in one millisecond are not ordered)
   last AS (
     SELECT DISTINCT ON (m.chat_jid) m.organization_id, m.session_id, m.chat_jid, m.id, m.created_at
       FROM m JOIN b ON b.id = m.id ORDER BY m.chat_jid, b.n DESC
   ),
   chat AS (${chatOfMessageSql('last', 'false')})
   ${answer}`;

/**
 * A statement in two forms: with its media step (the accept's insert of the bytes, the record's delete of them), and
 * without it for a batch with no media (texts, the common send), which then has one relation fewer to lock, open and
 * set up on every execution.
 */
interface ByMedia {
  media: PreparedStatement;
  none: PreparedStatement;
}

const byMedia = (name: string, takeSeqs: string, from: string, answer: string, sendAtParam: string): ByMedia => ({
  media: preparedStatement(name, insertOutboundManySql(takeSeqs, from, answer, true, sendAtParam)),
  none: preparedStatement(`${name}_no_media`, insertOutboundManySql(takeSeqs, from, answer, false, sendAtParam)),
});

/** The form for a batch: with the media step when any of it has media. */
const formFor = (statement: ByMedia, media: boolean): PreparedStatement => (media ? statement.media : statement.none);

/** A bulk send of a session read first (`insertOutboundMany`): the numbers taken from the session row as it is. */
const INSERT_OUTBOUND_MANY = byMedia(
  'messages_insert_outbound_many',
  takeMessageSeqsSql('$3::text', 'cardinality($1::text[])'),
  'b.from_jid',
  'SELECT * FROM m',
  '$21',
);

/**
 * The accepts of plain sends whose session was not read first (`insertAcceptedMany`, the API's group of concurrent
 * accepts of one session, a lone send being a group of one): INSERT_OUTBOUND_MANY whose numbers are taken only from a
 * session of the organization ($2) in a sendable status ($21), with the sender (`from`) the session's own `wa_jid` and
 * the session's gateway returned with each row, so the session's existence, organization and status, the numbers, the
 * messages, their media and their chats are one round trip for the whole group.
 */
const INSERT_ACCEPTED_MANY = byMedia(
  'messages_insert_accepted_many',
  takeMessageSeqsIfSendableSql('$3::text', '$2::text', '$21::text[]', 'cardinality($1::text[])'),
  'COALESCE(s.wa_jid, b.from_jid)',
  'SELECT m.*, s.gateway_id AS session_gateway_id FROM m, s',
  '$22',
);

/**
 * The head of a session's send queue (`nextQueued`), through the partial index `messages_queued (session_id, seq, id)`,
 * with the session's presenceTyping (its repository's fragment, evaluated once per query).
 */
const NEXT_QUEUED = preparedStatement(
  'messages_next_queued',
  `SELECT ${MESSAGE_COLUMNS}, ${presenceTypingSql('$1')} AS session_presence_typing
     FROM messages WHERE session_id = $1 AND status = 'queued' ORDER BY seq, id LIMIT $2`,
);

/**
 * "Still queued", for a statement that finds its rows by primary key: a condition the planner cannot match to the
 * partial index `messages_queued` (`status = 'queued'`). Written as that equality, it let the plan scan the whole queue
 * of every session through that index and hash it (the index looks tiny to statistics taken while the queue was short),
 * so recording a send cost time in proportion to the backlog instead of a key lookup. `status` is never NULL, so
 * this is the same test.
 */
const stillQueuedSql = (alias: string) => `${alias}.status IS NOT DISTINCT FROM 'queued'`;

/**
 * A row a send's record may move to `sent`: still queued, or a campaign's message a pause or a cancel withdrew from the
 * queue (`withdrawCampaignQueued`: `scheduled` or `cancelled`, without `send_at`) while its sender was already sending
 * it. The network took that send: recorded, the message is `sent` (and its recipient counted so) instead of staying
 * withdrawn, to be sent a second time on resume, or counted `cancelled` although the recipient has it. Only a send the
 * network took is ever recorded, so this never marks sent what was not. A key lookup, like `stillQueuedSql`.
 */
const recordableSql = (alias: string) =>
  `(${stillQueuedSql(alias)} OR (${alias}.campaign_id IS NOT NULL AND ${alias}.send_at IS NULL AND ${alias}.status IN ('scheduled', 'cancelled')))`;

/**
 * Sends recorded (`markSentMany`, a drained batch; `markSent`, one): the conditional update of every row of the batch,
 * the media bytes of the media messages among those that moved deleted, and the outbox row announcing each send
 * inserted only for a row that moved (each row names its event: `event_id`, the i-th outbox row's id), in one
 * statement. The media delete's list is decided once, before any scan.
 */
const markSentManySql = (media: boolean) =>
  `WITH b AS (
     SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::bytea[], $4::timestamptz[], $5::text[]) AS b(id, sent_at, raw, updated_at, event_id)
   ),
   m AS (
     UPDATE messages SET status = 'sent', sent_at = b.sent_at, raw = COALESCE(b.raw, messages.raw), updated_at = COALESCE(b.updated_at, now())
       FROM b
      WHERE messages.id = b.id AND ${recordableSql('messages')}
      RETURNING messages.id, messages.media IS NOT NULL AS has_media, messages.held_ack, b.event_id
   ),
   ${media ? 'media AS (DELETE FROM message_media WHERE message_id = ANY(ARRAY(SELECT id FROM m WHERE has_media))),' : ''}
   outbox AS (${outboxInsertSql(6, 'u.id IN (SELECT event_id FROM m)')})
   SELECT id, held_ack FROM m`;

/** MARK_SENT_MANY, and its form for a batch of no media message (no media delete, as `ByMedia`'s accepts). */
const MARK_SENT_MANY: ByMedia = {
  media: preparedStatement('messages_mark_sent_many', markSentManySql(true)),
  none: preparedStatement('messages_mark_sent_many_no_media', markSentManySql(false)),
};

/** The parameters $1…$21 of INSERT_OUTBOUND. */
const outboundParams = (m: NewMessage, media: Buffer | null): unknown[] => [
  m.id, m.organizationId, m.sessionId, m.waMessageId, m.direction, m.chatJid, m.from, m.type, m.text ?? null,
  json(m.media), json(m.location), json(m.contact), json(m.poll), json(m.reaction), m.quotedMessageId ?? null,
  m.quotedWaMessageId ?? null, m.mentions ?? [], m.status, m.idempotencyKey ?? null, media, json(m.sendOptions),
  ts(m.sendAt), m.campaignId ?? null,
];

/** A message of a bulk accept and its media bytes. */
export interface NewOutbound {
  message: NewMessage;
  media: Buffer | null;
}

/** The parameters $1…$20 of INSERT_OUTBOUND_MANY and INSERT_ACCEPTED_MANY: one array per column, in the batch's order. */
const outboundManyParams = (organizationId: string, sessionId: string, batch: ReadonlyArray<NewOutbound>): unknown[] => {
  const col = <T>(f: (m: NewMessage, media: Buffer | null) => T) => batch.map((b) => f(b.message, b.media));
  return [
    col((m) => m.id),
    organizationId,
    sessionId,
    col((m) => m.waMessageId),
    col((m) => m.chatJid),
    col((m) => m.type),
    col((m) => m.text ?? null),
    col((m) => json(m.media)),
    col((m) => json(m.location)),
    col((m) => json(m.contact)),
    col((m) => json(m.poll)),
    col((m) => json(m.reaction)),
    col((m) => m.quotedMessageId ?? null),
    col((m) => m.quotedWaMessageId ?? null),
    // a text[] per message travels as its array literal (a text[][] would have to be rectangular)
    col((m) => pgArray(m.mentions ?? [])),
    col((m) => m.idempotencyKey ?? null),
    col((m) => m.status),
    col((m) => m.from),
    col((_m, media) => media),
    col((m) => json(m.sendOptions)),
  ];
};

/** The `send_at` array of a bulk accept, after its statement's other parameters. */
const sendAtsOf = (batch: ReadonlyArray<NewOutbound>) => batch.map((b) => ts(b.message.sendAt));

/**
 * The send queue (`messages` rows of a session's outbound sends, PostgreSQL being the queue): the accept of a send,
 * scheduled sends becoming due, the head a gateway drains, and a send recorded (`sent`) or failed, each once.
 */
@Injectable()
export class MessageQueueRepository {
  constructor(private readonly db: Db) {}

  /**
   * An accepted send, in one autocommit statement (INSERT_OUTBOUND): the session's next acceptance number, the message
   * with it, and its media bytes when there are any, so a gateway never drains a media message without its bytes.
   * Null (nothing written) when the session already has the waMessageId or the idempotency key; the number taken then
   * is skipped (a gap, which the drain order does not mind), and so it is when the session row is gone.
   *
   * Acceptance order is send order: the statement first locks the session row by taking its number
   * (`takeMessageSeqsSql`) and holds the lock until it commits, so a concurrent accept of the session waits for this
   * one's commit before it takes the next number; a visible number means every lower one has committed, and the
   * gateway drains by it. With `manager`, the statement runs in that transaction and the lock lasts until it commits.
   */
  async insertOutbound(m: NewMessage, media: Buffer | null, manager?: Tx): Promise<MessageRow | null> {
    const rows = await (manager ?? this.db).prepared<MessageRawRow>(INSERT_OUTBOUND, outboundParams(m, media));
    return rows[0] ? toMessageRow(rows[0]) : null;
  }

  /**
   * A bulk accept (a batch of one session, in its order) in one autocommit statement (INSERT_OUTBOUND_MANY): the
   * session's next numbers for the whole batch, each message with its own in the batch's order, their media bytes.
   * Returns the inserted rows by id; a message missing from it conflicted (idempotency key, waMessageId) and wrote
   * nothing. Every message must be outbound `queued`, of `session`.
   */
  async insertOutboundMany(session: OwnedSession, batch: ReadonlyArray<NewOutbound>): Promise<Map<string, MessageRow>> {
    if (batch.length === 0) return new Map();
    const rows = await this.db.prepared<MessageRawRow>(formFor(INSERT_OUTBOUND_MANY, batch.some((b) => b.media !== null)), [
      ...outboundManyParams(session.organizationId, session.id, batch),
      sendAtsOf(batch),
    ]);
    return new Map(rows.map((r) => [r.id, toMessageRow(r)]));
  }

  /**
   * `insertOutboundMany` for plain sends whose session was not read first (INSERT_ACCEPTED_MANY: the API's group of
   * concurrent accepts of one session, in arrival order; a lone send is a group of one): written only when the session
   * `sessionId` is of `organizationId` and its status is one of `statuses`, with the session's own `wa_jid` as the
   * sender (a message's `from` only when it has none), numbered consecutively in the group's order under the session's
   * counter row's lock (`takeMessageSeqsIfSendableSql`, the invariant of `insertOutbound`). Returns the inserted rows by id and
   * the session's gateway (where to signal them; null when nothing was inserted). Nothing inserted: no such session
   * there, or not in those statuses (the whole group); a message missing while others are there conflicted alone. It
   * takes a bare session id on purpose: the statement itself checks `organization_id`, so the hot send path reads no
   * session first (docs/decisions.md, "Tenant scope in the types").
   */
  async insertAcceptedMany(
    organizationId: string,
    sessionId: string,
    group: ReadonlyArray<NewOutbound>,
    statuses: readonly string[],
  ): Promise<{ rows: Map<string, MessageRow>; gatewayId: string | null }> {
    if (group.length === 0) return { rows: new Map(), gatewayId: null };
    const rows = await this.db.prepared<MessageRawRow & { session_gateway_id: string | null }>(formFor(INSERT_ACCEPTED_MANY, group.some((b) => b.media !== null)), [
      ...outboundManyParams(organizationId, sessionId, group),
      statuses,
      sendAtsOf(group),
    ]);
    return { rows: new Map(rows.map((r) => [r.id, toMessageRow(r)])), gatewayId: rows[0]?.session_gateway_id ?? null };
  }

  /**
   * The first `limit` queued outbound messages of a session, in acceptance order (the session's message number, then
   * id): the sender sends them one at a time, in this order. Every number below a visible one has committed, so no
   * message can later appear ahead of these. The session's presenceTyping comes with them (one query per batch).
   */
  async nextQueued(sessionId: string, limit: number): Promise<QueueHead> {
    const rows = await this.db.prepared<MessageRawRow & { session_presence_typing: boolean | null }>(NEXT_QUEUED, [sessionId, limit]);
    return { messages: rows.map(toMessageRow), presenceTyping: rows[0]?.session_presence_typing ?? false };
  }

  /**
   * Which of these sessions have a scheduled send due now (CONTRACT 17): a range read of the index
   * `messages_scheduled_due (session_id, send_at, id)` per session, so it costs the due rows, never the future ones. A
   * campaign's withdrawn message (`scheduled` without `send_at`, see `withdrawCampaignQueued`) is not in any range.
   */
  async sessionsWithDueScheduled(sessionIds: string[]): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const rows = await this.db.query<{ session_id: string }>(
      `SELECT s AS session_id FROM unnest($1::text[]) AS s
        WHERE EXISTS (SELECT 1 FROM messages WHERE session_id = s AND status = 'scheduled' AND send_at <= now())`,
      [sessionIds],
    );
    return rows.map((r) => r.session_id);
  }

  /** The due scheduled sends of a session, oldest `send_at` first, at most `limit` (the index's range). */
  async dueScheduledIds(sessionId: string, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM messages WHERE session_id = $1 AND status = 'scheduled' AND send_at <= now() ORDER BY send_at, id LIMIT $2`,
      [sessionId, limit],
    );
    return rows.map((r) => r.id);
  }

  /** The earliest `send_at` of a scheduled send of these sessions (one index probe each), or null. */
  async nextScheduledAt(sessionIds: string[]): Promise<number | null> {
    if (sessionIds.length === 0) return null;
    const rows = await this.db.query<{ at: Date | null }>(
      `SELECT min((SELECT send_at FROM messages WHERE session_id = s AND status = 'scheduled' AND send_at IS NOT NULL ORDER BY send_at LIMIT 1)) AS at
         FROM unnest($1::text[]) AS s`,
      [sessionIds],
    );
    return rows[0]?.at ? rows[0].at.getTime() : null;
  }

  /**
   * scheduled → queued for the due sends of a session, at most `limit`, oldest `send_at` first (then id), each with the
   * session's next acceptance number (`takeMessageSeqsSql`, the accept's own counter and lock), so a due send joins the
   * queue behind everything accepted before it became due and the drain's order rule holds. `ids`, when given, limits
   * it to those rows (a campaign's withdrawn message, re-queued by id whatever its `send_at`). One statement: rows
   * locked (SKIP LOCKED: a concurrent promotion or cancel takes others), numbered, moved. Returns the moved rows.
   */
  async promoteDue(sessionId: string, limit: number, ids: string[] | null = null): Promise<MessageRow[]> {
    const rows = await this.db.query<MessageRawRow>(
      `WITH due AS (
         SELECT id, row_number() OVER (ORDER BY send_at NULLS FIRST, id) AS n FROM (
           SELECT id, send_at FROM messages
            WHERE session_id = $1 AND status = 'scheduled'
              AND (CASE WHEN $3::text[] IS NULL THEN send_at <= now() ELSE id = ANY($3::text[]) END)
            ORDER BY send_at NULLS FIRST, id LIMIT $2 FOR UPDATE SKIP LOCKED
         ) d
       ),
       s AS (${takeMessageSeqsSql('$1::text', '(SELECT count(*) FROM due)')})
       UPDATE messages SET status = 'queued', seq = s.message_seq - (SELECT count(*) FROM due) + due.n, updated_at = now(),
              send_at = COALESCE(messages.send_at, now())
         FROM due, s
        WHERE messages.id = due.id AND (SELECT count(*) FROM due) > 0
       RETURNING ${MESSAGE_COLUMNS.split(',').map((c) => `messages.${c.trim()}`).join(', ')}`,
      [sessionId, limit, ids],
    );
    return rows.map(toMessageRow);
  }

  /**
   * A scheduled send withdrawn (`DELETE …/messages/{id}` while it is scheduled): scheduled → cancelled, once. Null when
   * it was not scheduled any more (already due and queued, or cancelled).
   */
  async cancelScheduled(session: OwnedSession, id: string): Promise<MessageRow | null> {
    const rows = await this.db.query<MessageRawRow>(
      `UPDATE messages SET status = 'cancelled', updated_at = now()
        WHERE id = $1 AND session_id = $2 AND organization_id = $3 AND status = 'scheduled'
       RETURNING ${MESSAGE_COLUMNS}`,
      [id, session.id, session.organizationId],
    );
    return rows[0] ? toMessageRow(rows[0]) : null;
  }

  /**
   * A paused campaign's message still in the queue goes back out of it (queued → scheduled without `send_at`, which no
   * due scan reads): the sender skips it, and a resume re-queues the same row (`promoteDue` by id), so its waMessageId
   * stays and a copy the network already took is stored once. A cancel ends it (`cancelled`).
   */
  async withdrawCampaignQueued(campaignId: string, to: 'scheduled' | 'cancelled', manager?: Tx): Promise<string[]> {
    const rows = await (manager ?? this.db).query<{ id: string }>(
      `UPDATE messages SET status = $2, send_at = NULL, updated_at = now()
        WHERE campaign_id = $1 AND status IN ('queued', 'scheduled') RETURNING id`,
      [campaignId, to],
    );
    return rows.map((r) => r.id);
  }

  /**
   * The status and sentAt of a message (a campaign's pacing reads its last message), and `updatedAt`: when its row last
   * changed, which for a message just sent is when the gateway recorded the send, in ms (an engine's `sentAt` can be
   * WhatsApp's timestamp, whole seconds taken before the relay).
   */
  async stateOf(
    id: string,
    manager?: Tx,
  ): Promise<{ status: MessageStatus; sentAt: number | null; sendAt: number | null; updatedAt: number } | null> {
    const rows = await (manager ?? this.db).query<{ status: MessageStatus; sent_at: Date | null; send_at: Date | null; updated_at: Date }>(
      `SELECT status, sent_at, send_at, updated_at FROM messages WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    return r ? { status: r.status, sentAt: r.sent_at?.getTime() ?? null, sendAt: r.send_at?.getTime() ?? null, updatedAt: r.updated_at.getTime() } : null;
  }

  /** Which of these sessions have queued messages (the gateway's sweep after a lost signal). */
  async sessionsWithQueued(sessionIds: string[]): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const rows = await this.db.query<{ session_id: string }>(
      `SELECT DISTINCT session_id FROM messages WHERE status = 'queued' AND session_id = ANY($1)`,
      [sessionIds],
    );
    return rows.map((r) => r.session_id);
  }

  /**
   * queued → sent, once (or a campaign's message withdrawn while it was being sent: `recordableSql`): null when it was not queued any more, else the ack a receipt left on the row while it was
   * queued (`applyAck`), for the caller to apply now. One statement (MARK_SENT_MANY): the row's new status, its
   * media bytes dropped (they are no longer needed; only a media message has any), and `outbox`, the events announcing
   * the send, inserted only when the row moved — so the change and its events commit together, or neither.
   * `updatedAt` (epoch ms, default now) is the row's new `updatedAt`: a caller that built the event's Message before
   * the statement passes the value it put there. Such a Message can be built from the queued row it read: nothing but
   * this statement and markFailed (both only from `queued`) changes a queued row's Message fields. The row is not read
   * back: the caller has it. A batch of one of `markSentMany` (the same statement).
   */
  async markSent(
    id: string,
    sentAt: number,
    raw: Uint8Array | null,
    updatedAt?: number,
    outbox: OutboxRows = OutboxRows.none,
  ): Promise<{ heldAck: AckStatus | null } | null> {
    return (await this.markSentMany([{ id, sentAt, raw, updatedAt }], outbox)).get(id) ?? null;
  }

  /**
   * `markSent` for a drained batch, in one statement (MARK_SENT_MANY): each row queued → sent once, its media bytes
   * dropped, and `outbox`'s i-th event (when there is one) written only when the i-th send's row moved. Answers the
   * rows that moved, by id, each with the ack a receipt left on it while it was queued (null: none); a row missing
   * from the answer was not queued any more and wrote nothing.
   */
  async markSentMany(sends: ReadonlyArray<SentRecord>, outbox: OutboxRows = OutboxRows.none): Promise<Map<string, { heldAck: AckStatus | null }>> {
    if (sends.length === 0) return new Map();
    const eventIds = sends.map((_s, i) => outbox.envelopes[i]?.id ?? null);
    const rows = await this.db.prepared<{ id: string; held_ack: AckStatus | null }>(formFor(MARK_SENT_MANY, sends.some((s) => s.media !== false)), [
      sends.map((s) => s.id),
      sends.map((s) => new Date(s.sentAt)),
      sends.map((s) => (s.raw ? Buffer.from(s.raw) : null)),
      sends.map((s) => ts(s.updatedAt)),
      eventIds,
      ...outbox.params,
    ]);
    return new Map(rows.map((r) => [r.id, { heldAck: r.held_ack }]));
  }

  /** queued → failed, once. */
  async markFailed(id: string, error: string, manager?: Tx): Promise<MessageRow | null> {
    const q = (manager ?? this.db);
    const row = await updatedRow(
      q,
      `UPDATE messages SET status = 'failed', error = $2, updated_at = now() WHERE id = $1 AND ${stillQueuedSql('messages')} RETURNING ${MESSAGE_COLUMNS}`,
      [id, error],
    );
    if (row?.media) await q.query(`DELETE FROM message_media WHERE message_id = $1`, [id]);
    return row;
  }
}
