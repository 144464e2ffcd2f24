import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { pgArray } from '../pg-array';
import { PreparedStatement, preparedStatement, runPrepared } from '../prepared';
import { OutboxRows, outboxInsertSql } from './events.repository';
import { autoReadSql, presenceTypingSql, takeMessageSeqsIfSendableSql, takeMessageSeqsSql } from './sessions.repository';
import { chatOfMessageSql } from './chats.repository';
import { campaignMediaSql } from './campaigns.repository';
import type {
  AckStatus,
  ContactContent,
  LocationContent,
  MediaRef,
  MediaView,
  MessageDirection,
  MessageSendOptions,
  MessageStatus,
  MessageReaction,
  MessageType,
  MessageView,
  PollContent,
  PollVoteRecord,
} from '@app/contracts';
import { OUTBOUND_STATUS_RANK } from '@app/contracts';

/** A row of `messages` as the apps see it (the view plus what only the gateway needs). */
export interface MessageRow extends MessageView {
  mediaRef: MediaRef | null;
  reaction: { waMessageId: string; emoji: string } | null;
  quotedWaMessageId: string | null;
  mentions: string[];
  idempotencyKey: string | null;
  /** a group message we sent: each member's furthest receipt */
  memberAcks: Record<string, AckStatus>;
  /** an outbound message's forward source, poll vote or link preview (MessageSendOptions); null for the others */
  sendOptions: MessageSendOptions | null;
}

/** What an edit changed: the row after it and the text (or caption) before it. */
export interface EditedMessage {
  row: MessageRow;
  previousText: string | null;
}

/** What an insert provides; the rest is defaulted. */
export interface NewMessage {
  id: string;
  organizationId: string;
  sessionId: string;
  waMessageId: string;
  direction: MessageDirection;
  chatJid: string;
  from: string | null;
  type: MessageType;
  text?: string | null;
  media?: MediaView | null;
  mediaRef?: MediaRef | null;
  location?: LocationContent | null;
  contact?: ContactContent | null;
  poll?: PollContent | null;
  reaction?: { waMessageId: string; emoji: string } | null;
  quotedMessageId?: string | null;
  quotedWaMessageId?: string | null;
  mentions?: string[];
  status: MessageStatus;
  idempotencyKey?: string | null;
  sendOptions?: MessageSendOptions | null;
  raw?: Uint8Array | null;
  /** the session's acceptance order of an outbound message (taken by `insertOutbound`, see `takeMessageSeqsSql`) */
  seq?: number | null;
  /** epoch ms; default now */
  createdAt?: number;
  sentAt?: number | null;
  /** stored from a history sync on pairing (no `message.received` for it, no unread count) */
  fromHistory?: boolean;
  /** epoch ms a `scheduled` send is due (CONTRACT 17) */
  sendAt?: number | null;
  /** the campaign it is sent for */
  campaignId?: string | null;
}

/** A send the network took, to record (`markSentMany`): `updatedAt` (epoch ms, default now) is the row's new updatedAt. */
export interface SentRecord {
  id: string;
  sentAt: number;
  raw: Uint8Array | null;
  updatedAt?: number;
  /** whether the message is a media message (its row's `media`), whose bytes the record drops; absent: it may be */
  media?: boolean;
}

/** The head of a session's send queue, and how the session sends (read in the same query). */
export interface QueueHead {
  /** the first queued outbound messages, in acceptance order */
  messages: MessageRow[];
  /** the session's `presenceTyping` ("typing…" before each text); false when nothing is queued */
  presenceTyping: boolean;
}

export interface MessageFilter {
  direction?: MessageDirection;
  chatJid?: string;
  status?: MessageStatus;
}

const COLUMNS = `id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, text, media, media_ref,
  location, contact, poll, reaction, quoted_message_id, quoted_wa_message_id, mentions, status, error, idempotency_key,
  created_at, updated_at, sent_at, revoked_at, member_acks, edited_at, reactions, poll_votes, from_history, send_options,
  send_at, campaign_id`;

interface RawRow {
  id: string;
  organization_id: string;
  session_id: string;
  wa_message_id: string;
  direction: MessageDirection;
  chat_jid: string;
  from_jid: string | null;
  type: MessageType;
  text: string | null;
  media: MediaView | null;
  media_ref: MediaRef | null;
  location: LocationContent | null;
  contact: ContactContent | null;
  poll: PollContent | null;
  reaction: { waMessageId: string; emoji: string } | null;
  quoted_message_id: string | null;
  quoted_wa_message_id: string | null;
  mentions: string[];
  status: MessageStatus;
  error: string | null;
  idempotency_key: string | null;
  created_at: Date;
  updated_at: Date;
  sent_at: Date | null;
  revoked_at: Date | null;
  member_acks: Record<string, AckStatus> | null;
  edited_at: Date | null;
  reactions: MessageReaction[] | null;
  poll_votes: PollVoteRecord[] | null;
  from_history: boolean;
  send_options: MessageSendOptions | null;
  send_at: Date | null;
  campaign_id: string | null;
}

function toRow(r: RawRow): MessageRow {
  return {
    id: r.id,
    sessionId: r.session_id,
    organizationId: r.organization_id,
    waMessageId: r.wa_message_id,
    direction: r.direction,
    chatJid: r.chat_jid,
    from: r.from_jid,
    type: r.type,
    text: r.text,
    media: r.media,
    location: r.location,
    contact: r.contact,
    poll: r.poll,
    quotedMessageId: r.quoted_message_id,
    status: r.status,
    error: r.error,
    createdAt: r.created_at.getTime(),
    updatedAt: r.updated_at.getTime(),
    sentAt: r.sent_at ? r.sent_at.getTime() : null,
    mediaRef: r.media_ref,
    reaction: r.reaction,
    quotedWaMessageId: r.quoted_wa_message_id,
    mentions: r.mentions ?? [],
    idempotencyKey: r.idempotency_key,
    revokedAt: r.revoked_at ? r.revoked_at.getTime() : null,
    memberAcks: r.member_acks ?? {},
    editedAt: r.edited_at ? r.edited_at.getTime() : null,
    reactions: r.reactions ?? [],
    pollVotes: r.poll_votes ?? [],
    fromHistory: r.from_history,
    sendOptions: r.send_options ?? null,
    sendAt: r.send_at ? r.send_at.getTime() : null,
    campaignId: r.campaign_id ?? null,
  };
}

/** The API's Message resource: the row without what only the gateway needs. */
export function toMessageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    sessionId: row.sessionId,
    organizationId: row.organizationId,
    waMessageId: row.waMessageId,
    direction: row.direction,
    chatJid: row.chatJid,
    from: row.from,
    type: row.type,
    text: row.text,
    media: row.media,
    location: row.location,
    contact: row.contact,
    poll: row.poll,
    quotedMessageId: row.quotedMessageId,
    status: row.status,
    error: row.error,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    sentAt: row.sentAt,
    editedAt: row.editedAt,
    revokedAt: row.revokedAt,
    reactions: row.reactions,
    pollVotes: row.pollVotes,
    fromHistory: row.fromHistory,
    sendAt: row.sendAt,
    campaignId: row.campaignId,
  };
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const ts = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms));

/**
 * `column`'s rank in the outbound order (OUTBOUND_STATUS_RANK, written out as SQL), `otherwise` for any other value:
 * an ack never moves a message backwards (a late `delivered` after `read`).
 */
const rankSql = (column: string, otherwise: number) =>
  `CASE ${column} ${Object.entries(OUTBOUND_STATUS_RANK).map(([status, rank]) => `WHEN '${status}' THEN ${rank}`).join(' ')} ELSE ${otherwise} END`;
const RANK_SQL = rankSql('status', -1);

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
     RETURNING ${COLUMNS}
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
     RETURNING ${COLUMNS}
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
  `SELECT ${COLUMNS}, ${presenceTypingSql('$1')} AS session_presence_typing
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

/** Rank of a held ack (0: none). */
const HELD_RANK_SQL = rankSql('held_ack', 0);

/**
 * A receipt, in one statement: a sent message moves forward only, and forgets a held ack it reaches; a queued one
 * (the receipt overtook markSent) keeps the highest ack in `held_ack`. In SET, the columns are the row before the
 * update; RETURNING shows it after, so `status = 'queued'` there means "held".
 */
const APPLY_ACK = preparedStatement(
  'messages_apply_ack',
  `UPDATE messages SET
     status = CASE WHEN status = 'queued' THEN status ELSE $3 END,
     held_ack = CASE WHEN status = 'queued' THEN $3 WHEN ${HELD_RANK_SQL} > $4 THEN held_ack ELSE NULL END,
     updated_at = CASE WHEN status = 'queued' THEN updated_at ELSE now() END
   WHERE session_id = $1 AND wa_message_id = $2 AND direction = 'out'
     AND ((status = 'queued' AND ${HELD_RANK_SQL} < $4) OR ${RANK_SQL} BETWEEN 1 AND $4 - 1)
   RETURNING ${COLUMNS}`,
);

const STATUS_OF_RANK_SQL = (rank: string) =>
  `CASE ${rank} ${Object.entries(OUTBOUND_STATUS_RANK).map(([status, r]) => `WHEN ${r} THEN '${status}'`).join(' ')} END`;

/**
 * A group member's receipt (`applyMemberAck`): the member's entry in `member_acks` moves forward only; the row's status
 * moves to the step every member of `$5` has reached (the lowest of their entries), never backwards, and never while
 * the row is queued or failed. Returns the row with `member_moved` and the status it had before.
 */
const APPLY_MEMBER_ACK = preparedStatement(
  'messages_apply_member_ack',
  `WITH cur AS (
     SELECT id AS cur_id, status AS old_status, coalesce(member_acks, '{}'::jsonb) AS acks
       FROM messages WHERE session_id = $1 AND wa_message_id = $2 AND direction = 'out' AND status <> 'failed' FOR UPDATE
   ),
   nxt AS (
     SELECT cur_id, old_status, acks || jsonb_build_object($3::text, $4::text) AS acks FROM cur
      WHERE ${rankSql(`(acks->>$3::text)`, 0)} < ${rankSql('$4::text', 0)}
   ),
   agg AS (
     SELECT nxt.*, (SELECT min(${rankSql('(nxt.acks->>m)', 0)}) FROM unnest($5::text[]) AS m) AS all_rank FROM nxt
   )
   UPDATE messages SET
       member_acks = agg.acks,
       status = CASE WHEN status <> 'queued' AND agg.all_rank > ${RANK_SQL} THEN ${STATUS_OF_RANK_SQL('agg.all_rank')} ELSE status END,
       updated_at = now()
     FROM agg WHERE id = agg.cur_id
   RETURNING ${COLUMNS}, agg.old_status`,
);

/** What a group member's receipt did: `row` after it, and whether the message as a whole moved (`moved`). */
export interface MemberAckOutcome {
  row: MessageRow;
  moved: boolean;
}

/** What a receipt did: moved a sent message (announce it), or was kept on a queued one until it is recorded sent. */
export type AckOutcome = { moved: MessageRow } | { held: true };

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

/** Every query of `messages` and `message_media`. */
/** The rows of an UPDATE or DELETE … RETURNING through TypeORM's `query`, which answers those as `[rows, count]`. */
function updated<T>(result: T[] | [T[], number]): T[] {
  return result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number' ? (result[0] as T[]) : (result as T[]);
}

@Injectable()
export class MessagesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The organization's messages stored per hour since `since` (epoch ms, an hour's start): received (inbound) and sent
   * (outbound, counted when accepted), history syncs left out. Hours without any are absent. One range scan of the
   * partial index `messages_org_recent` (organization_id, created_at) INCLUDE (direction).
   */
  async hourlyCounts(organizationId: string, since: number): Promise<Array<{ hour: number; received: number; sent: number }>> {
    const rows: Array<{ hour: Date; received: number; sent: number }> = await this.db.query(
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

  private q(manager?: EntityManager): Pick<DataSource, 'query'> {
    return manager ?? this.db;
  }

  /**
   * Inserts a message; a conflicting (session, waMessageId) or (session, idempotency key) inserts nothing and
   * returns null, so the caller can tell a re-delivery or a repeat from a new message.
   */
  async insert(m: NewMessage, manager?: EntityManager): Promise<MessageRow | null> {
    // the message's chat is kept current by the same statement (ChatsRepository's fragment): a received message counts
    // as unread unless it came from a history sync or the session marks what it receives read (autoRead)
    const rows: RawRow[] = await this.q(manager).query(
      `WITH m AS (
         INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, text, media,
           media_ref, location, contact, poll, reaction, quoted_message_id, quoted_wa_message_id, mentions, status,
           idempotency_key, raw, created_at, updated_at, sent_at, seq, from_history)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
           COALESCE($22, now()), COALESCE($22, now()), $23, $24, $25)
         ON CONFLICT DO NOTHING
         RETURNING ${COLUMNS}
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
    return rows[0] ? toRow(rows[0]) : null;
  }

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
  async insertOutbound(m: NewMessage, media: Buffer | null, manager?: EntityManager): Promise<MessageRow | null> {
    const { rows } = await runPrepared<RawRow>(manager ?? this.db, INSERT_OUTBOUND, outboundParams(m, media));
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * A bulk accept (a batch of one session, in its order) in one autocommit statement (INSERT_OUTBOUND_MANY): the
   * session's next numbers for the whole batch, each message with its own in the batch's order, their media bytes.
   * Returns the inserted rows by id; a message missing from it conflicted (idempotency key, waMessageId) and wrote
   * nothing. Every message must be outbound `queued`, of `sessionId` and of `organizationId`.
   */
  async insertOutboundMany(organizationId: string, sessionId: string, batch: ReadonlyArray<NewOutbound>): Promise<Map<string, MessageRow>> {
    if (batch.length === 0) return new Map();
    const { rows } = await runPrepared<RawRow>(this.db, formFor(INSERT_OUTBOUND_MANY, batch.some((b) => b.media !== null)), [
      ...outboundManyParams(organizationId, sessionId, batch),
      sendAtsOf(batch),
    ]);
    return new Map(rows.map((r) => [r.id, toRow(r)]));
  }

  /**
   * `insertOutboundMany` for plain sends whose session was not read first (INSERT_ACCEPTED_MANY: the API's group of
   * concurrent accepts of one session, in arrival order; a lone send is a group of one): written only when the session
   * `sessionId` is of `organizationId` and its status is one of `statuses`, with the session's own `wa_jid` as the
   * sender (a message's `from` only when it has none), numbered consecutively in the group's order under the session's
   * counter row's lock (`takeMessageSeqsIfSendableSql`, the invariant of `insertOutbound`). Returns the inserted rows by id and
   * the session's gateway (where to signal them; null when nothing was inserted). Nothing inserted: no such session
   * there, or not in those statuses (the whole group); a message missing while others are there conflicted alone.
   */
  async insertAcceptedMany(
    organizationId: string,
    sessionId: string,
    group: ReadonlyArray<NewOutbound>,
    statuses: readonly string[],
  ): Promise<{ rows: Map<string, MessageRow>; gatewayId: string | null }> {
    if (group.length === 0) return { rows: new Map(), gatewayId: null };
    const { rows } = await runPrepared<RawRow & { session_gateway_id: string | null }>(this.db, formFor(INSERT_ACCEPTED_MANY, group.some((b) => b.media !== null)), [
      ...outboundManyParams(organizationId, sessionId, group),
      statuses,
      sendAtsOf(group),
    ]);
    return { rows: new Map(rows.map((r) => [r.id, toRow(r)])), gatewayId: rows[0]?.session_gateway_id ?? null };
  }

  /** The messages first accepted under these keys in the last `windowMs` (a batch's repeats), by key. */
  async findByIdempotencyKeys(sessionId: string, keys: string[], windowMs: number): Promise<Map<string, MessageRow>> {
    if (keys.length === 0) return new Map();
    const rows: RawRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND idempotency_key = ANY($2::text[]) AND created_at > now() - ($3 * interval '1 millisecond')`,
      [sessionId, keys, windowMs],
    );
    return new Map(rows.map((r) => [r.idempotency_key!, toRow(r)]));
  }

  /** `releaseIdempotencyKey` for several keys in one statement. */
  async releaseIdempotencyKeys(sessionId: string, keys: string[], windowMs: number): Promise<void> {
    if (keys.length === 0) return;
    await this.db.query(
      `UPDATE messages SET idempotency_key = NULL WHERE session_id = $1 AND idempotency_key = ANY($2::text[]) AND created_at <= now() - ($3 * interval '1 millisecond')`,
      [sessionId, keys, windowMs],
    );
  }

  /**
   * An outbound message's bytes: its own (`message_media`), or, for a message of a media campaign, its campaign's,
   * stored once for every recipient (`campaign_media`, the campaigns repository's fragment).
   */
  async mediaOf(messageId: string): Promise<Buffer | null> {
    const rows: Array<{ data: Buffer }> = await this.db.query(
      `SELECT data FROM message_media WHERE message_id = $1
       UNION ALL ${campaignMediaSql('(SELECT campaign_id FROM messages WHERE id = $1)')}
       LIMIT 1`,
      [messageId],
    );
    return rows[0]?.data ?? null;
  }

  async findInOrganization(organizationId: string, sessionId: string, id: string): Promise<MessageRow | null> {
    const rows: RawRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM messages WHERE id = $1 AND session_id = $2 AND organization_id = $3`,
      [id, sessionId, organizationId],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  async findById(id: string): Promise<MessageRow | null> {
    const rows: RawRow[] = await this.db.query(`SELECT ${COLUMNS} FROM messages WHERE id = $1`, [id]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  async findByWaId(sessionId: string, waMessageId: string): Promise<MessageRow | null> {
    const rows: RawRow[] = await this.db.query(`SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND wa_message_id = $2`, [
      sessionId,
      waMessageId,
    ]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Our ids of the given network ids in one session (quotes, reactions, polls resolve through it). */
  async idsByWaIds(sessionId: string, waMessageIds: string[]): Promise<Map<string, string>> {
    if (waMessageIds.length === 0) return new Map();
    const rows: Array<{ id: string; wa_message_id: string }> = await this.db.query(
      `SELECT id, wa_message_id FROM messages WHERE session_id = $1 AND wa_message_id = ANY($2)`,
      [sessionId, waMessageIds],
    );
    return new Map(rows.map((r) => [r.wa_message_id, r.id]));
  }

  /** The stored network content of a message (Baileys' getMessage, quotes, poll decryption). */
  async rawOf(sessionId: string, waMessageId: string): Promise<Uint8Array | null> {
    const rows: Array<{ raw: Buffer | null }> = await this.db.query(
      `SELECT raw FROM messages WHERE session_id = $1 AND wa_message_id = $2`,
      [sessionId, waMessageId],
    );
    return rows[0]?.raw ?? null;
  }

  /** A repeat of an accepted send: the message first accepted under this key in the last `windowMs`. */
  async findByIdempotencyKey(sessionId: string, key: string, windowMs: number): Promise<MessageRow | null> {
    const rows: RawRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND idempotency_key = $2 AND created_at > now() - ($3 * interval '1 millisecond')`,
      [sessionId, key, windowMs],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Frees a key whose window has passed, so it can be used again. */
  async releaseIdempotencyKey(sessionId: string, key: string, windowMs: number): Promise<void> {
    await this.db.query(
      `UPDATE messages SET idempotency_key = NULL WHERE session_id = $1 AND idempotency_key = $2 AND created_at <= now() - ($3 * interval '1 millisecond')`,
      [sessionId, key, windowMs],
    );
  }

  /** The messages of one session with these ids (a chat list's last messages), in no particular order. */
  async findByIds(sessionId: string, ids: string[]): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    const rows: RawRow[] = await this.db.query(`SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND id = ANY($2)`, [sessionId, ids]);
    return rows.map(toRow);
  }

  /** Newest first, keyset-paginated by id. */
  async page(sessionId: string, filter: MessageFilter, limit: number, cursor?: string): Promise<MessageRow[]> {
    const where = ['session_id = $1'];
    const params: unknown[] = [sessionId];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.direction) add('direction = ?', filter.direction);
    if (filter.chatJid) add('chat_jid = ?', filter.chatJid);
    if (filter.status) add('status = ?', filter.status);
    if (cursor) add('id < ?', cursor);
    params.push(limit);
    const rows: RawRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM messages WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(toRow);
  }

  /**
   * The first `limit` queued outbound messages of a session, in acceptance order (the session's message number, then
   * id): the sender sends them one at a time, in this order. Every number below a visible one has committed, so no
   * message can later appear ahead of these. The session's presenceTyping comes with them (one query per batch).
   */
  async nextQueued(sessionId: string, limit: number): Promise<QueueHead> {
    const { rows } = await runPrepared<RawRow & { session_presence_typing: boolean | null }>(this.db, NEXT_QUEUED, [sessionId, limit]);
    return { messages: rows.map(toRow), presenceTyping: rows[0]?.session_presence_typing ?? false };
  }

  /**
   * Which of these sessions have a scheduled send due now (CONTRACT 17): a range read of the index
   * `messages_scheduled_due (session_id, send_at, id)` per session, so it costs the due rows, never the future ones. A
   * campaign's withdrawn message (`scheduled` without `send_at`, see `withdrawCampaignQueued`) is not in any range.
   */
  async sessionsWithDueScheduled(sessionIds: string[]): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const rows: Array<{ session_id: string }> = await this.db.query(
      `SELECT s AS session_id FROM unnest($1::text[]) AS s
        WHERE EXISTS (SELECT 1 FROM messages WHERE session_id = s AND status = 'scheduled' AND send_at <= now())`,
      [sessionIds],
    );
    return rows.map((r) => r.session_id);
  }

  /** The due scheduled sends of a session, oldest `send_at` first, at most `limit` (the index's range). */
  async dueScheduledIds(sessionId: string, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM messages WHERE session_id = $1 AND status = 'scheduled' AND send_at <= now() ORDER BY send_at, id LIMIT $2`,
      [sessionId, limit],
    );
    return rows.map((r) => r.id);
  }

  /** The earliest `send_at` of a scheduled send of these sessions (one index probe each), or null. */
  async nextScheduledAt(sessionIds: string[]): Promise<number | null> {
    if (sessionIds.length === 0) return null;
    const rows: Array<{ at: Date | null }> = await this.db.query(
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
    const rows: RawRow[] = updated(await this.db.query(
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
       RETURNING ${COLUMNS.split(',').map((c) => `messages.${c.trim()}`).join(', ')}`,
      [sessionId, limit, ids],
    ));
    return rows.map(toRow);
  }

  /**
   * A scheduled send withdrawn (`DELETE …/messages/{id}` while it is scheduled): scheduled → cancelled, once. Null when
   * it was not scheduled any more (already due and queued, or cancelled).
   */
  async cancelScheduled(organizationId: string, sessionId: string, id: string): Promise<MessageRow | null> {
    const rows: RawRow[] = updated(await this.db.query(
      `UPDATE messages SET status = 'cancelled', updated_at = now()
        WHERE id = $1 AND session_id = $2 AND organization_id = $3 AND status = 'scheduled'
       RETURNING ${COLUMNS}`,
      [id, sessionId, organizationId],
    ));
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * A paused campaign's message still in the queue goes back out of it (queued → scheduled without `send_at`, which no
   * due scan reads): the sender skips it, and a resume re-queues the same row (`promoteDue` by id), so its waMessageId
   * stays and a copy the network already took is stored once. A cancel ends it (`cancelled`).
   */
  async withdrawCampaignQueued(campaignId: string, to: 'scheduled' | 'cancelled', manager?: EntityManager): Promise<string[]> {
    const rows: Array<{ id: string }> = updated(await this.q(manager).query(
      `UPDATE messages SET status = $2, send_at = NULL, updated_at = now()
        WHERE campaign_id = $1 AND status IN ('queued', 'scheduled') RETURNING id`,
      [campaignId, to],
    ));
    return rows.map((r) => r.id);
  }

  /**
   * The status and sentAt of a message (a campaign's pacing reads its last message), and `updatedAt`: when its row last
   * changed, which for a message just sent is when the gateway recorded the send, in ms (an engine's `sentAt` can be
   * WhatsApp's timestamp, whole seconds taken before the relay).
   */
  async stateOf(
    id: string,
    manager?: EntityManager,
  ): Promise<{ status: MessageStatus; sentAt: number | null; sendAt: number | null; updatedAt: number } | null> {
    const rows: Array<{ status: MessageStatus; sent_at: Date | null; send_at: Date | null; updated_at: Date }> = await this.q(manager).query(
      `SELECT status, sent_at, send_at, updated_at FROM messages WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    return r ? { status: r.status, sentAt: r.sent_at?.getTime() ?? null, sendAt: r.send_at?.getTime() ?? null, updatedAt: r.updated_at.getTime() } : null;
  }

  /** Which of these sessions have queued messages (the gateway's sweep after a lost signal). */
  async sessionsWithQueued(sessionIds: string[]): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const rows: Array<{ session_id: string }> = await this.db.query(
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
    const { rows } = await runPrepared<{ id: string; held_ack: AckStatus | null }>(this.db, formFor(MARK_SENT_MANY, sends.some((s) => s.media !== false)), [
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
  async markFailed(id: string, error: string, manager?: EntityManager): Promise<MessageRow | null> {
    const q = this.q(manager);
    const row = await updatedRow(
      q,
      `UPDATE messages SET status = 'failed', error = $2, updated_at = now() WHERE id = $1 AND ${stillQueuedSql('messages')} RETURNING ${COLUMNS}`,
      [id, error],
    );
    if (row?.media) await q.query(`DELETE FROM message_media WHERE message_id = $1`, [id]);
    return row;
  }

  /**
   * A receipt for an outbound message: a sent one moves forward only (sent → delivered → read → played) and comes back
   * `moved`; a queued one keeps the ack on its row (`held`, the highest seen) until `markSent` hands it back, so a
   * crash in between loses nothing. null: nothing to do (not ours, not outbound, not forward, failed).
   */
  async applyAck(sessionId: string, waMessageId: string, status: AckStatus, manager?: EntityManager): Promise<AckOutcome | null> {
    const { rows } = await runPrepared<RawRow>(manager ?? this.db, APPLY_ACK, [sessionId, waMessageId, status, OUTBOUND_STATUS_RANK[status]]);
    if (!rows[0]) return null;
    return rows[0].status === 'queued' ? { held: true } : { moved: toRow(rows[0]) };
  }

  /**
   * An edit from the network: the text of a text message, the caption of a media message. null when there is nothing
   * to change: an unknown message, a revoked one, or the same text again (a re-delivered edit publishes nothing twice).
   */
  async applyEdit(sessionId: string, waMessageId: string, text: string, manager?: EntityManager): Promise<EditedMessage | null> {
    const [rows]: [Array<RawRow & { previous_text: string | null }>, number] = await this.q(manager).query(
      `WITH old AS (
         SELECT id AS old_id, CASE WHEN media IS NULL THEN text ELSE media->>'caption' END AS previous_text, media IS NULL AS is_text
           FROM messages WHERE session_id = $1 AND wa_message_id = $2 AND revoked_at IS NULL FOR UPDATE
       )
       UPDATE messages SET
           text = CASE WHEN old.is_text THEN $3::text ELSE text END,
           media = CASE WHEN old.is_text THEN media ELSE jsonb_set(media, '{caption}', to_jsonb($3::text)) END,
           edited_at = now(), updated_at = now()
         FROM old WHERE id = old.old_id AND old.previous_text IS DISTINCT FROM $3::text
       RETURNING ${COLUMNS}, old.previous_text`,
      [sessionId, waMessageId, text],
    );
    return rows[0] ? { row: toRow(rows[0]), previousText: rows[0].previous_text } : null;
  }

  /**
   * A reaction to a message of the session: the reactor's earlier reaction replaced, or removed with `""`. null when
   * nothing changed (an unknown message, or the same reaction again: a re-delivered one).
   */
  async applyReaction(sessionId: string, waMessageId: string, from: string, emoji: string, manager?: EntityManager): Promise<MessageRow | null> {
    return updatedRow(
      this.q(manager),
      `UPDATE messages SET
           reactions = NULLIF(
             COALESCE((SELECT jsonb_agg(r) FROM jsonb_array_elements(COALESCE(reactions, '[]'::jsonb)) r WHERE r->>'from' <> $3), '[]'::jsonb)
               || CASE WHEN $4 = '' THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('from', $3::text, 'emoji', $4::text)) END,
             '[]'::jsonb),
           updated_at = now()
         WHERE session_id = $1 AND wa_message_id = $2
           AND COALESCE((SELECT r->>'emoji' FROM jsonb_array_elements(COALESCE(reactions, '[]'::jsonb)) r WHERE r->>'from' = $3 LIMIT 1), '') <> $4
       RETURNING ${COLUMNS}`,
      [sessionId, waMessageId, from, emoji],
    );
  }

  /** A vote on a poll of the session: the voter's earlier vote replaced. null: not a stored poll, or the same vote again. */
  async applyPollVote(sessionId: string, pollWaMessageId: string, voter: string, options: string[], manager?: EntityManager): Promise<MessageRow | null> {
    return updatedRow(
      this.q(manager),
      `UPDATE messages SET
           poll_votes = COALESCE((SELECT jsonb_agg(v) FROM jsonb_array_elements(COALESCE(poll_votes, '[]'::jsonb)) v WHERE v->>'voter' <> $3), '[]'::jsonb)
             || jsonb_build_array(jsonb_build_object('voter', $3::text, 'options', $4::jsonb)),
           updated_at = now()
         WHERE session_id = $1 AND wa_message_id = $2 AND poll IS NOT NULL
           AND (SELECT v->'options' FROM jsonb_array_elements(COALESCE(poll_votes, '[]'::jsonb)) v WHERE v->>'voter' = $3 LIMIT 1) IS DISTINCT FROM $4::jsonb
       RETURNING ${COLUMNS}`,
      [sessionId, pollWaMessageId, voter, JSON.stringify(options)],
    );
  }

  /** A delete for everyone from the network: the row marked once (null: unknown, or already marked). */
  async markRevoked(sessionId: string, waMessageId: string, manager?: EntityManager): Promise<MessageRow | null> {
    return updatedRow(
      this.q(manager),
      `UPDATE messages SET revoked_at = now(), updated_at = now()
        WHERE session_id = $1 AND wa_message_id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
      [sessionId, waMessageId],
    );
  }

  /**
   * A group member's receipt for a message we sent: the member's furthest step kept on the row (`member_acks`), and the
   * message's own status moved to what every one of `members` (the group minus ourselves) has reached. null: nothing
   * changed (unknown, not outbound, failed, or not forward for this member).
   */
  async applyMemberAck(sessionId: string, waMessageId: string, member: string, status: AckStatus, members: string[], manager?: EntityManager): Promise<MemberAckOutcome | null> {
    const { rows } = await runPrepared<RawRow & { old_status: MessageStatus }>(manager ?? this.db, APPLY_MEMBER_ACK, [sessionId, waMessageId, member, status, members]);
    if (!rows[0]) return null;
    return { row: toRow(rows[0]), moved: rows[0].status !== rows[0].old_status };
  }

  /**
   * Acks kept on messages that are recorded sent by now but were not applied (their gateway stopped in between):
   * what a new holder of the session applies first.
   */
  async heldAcksOf(sessionId: string): Promise<Array<{ waMessageId: string; status: AckStatus }>> {
    const rows: Array<{ wa_message_id: string; held_ack: AckStatus }> = await this.db.query(
      `SELECT wa_message_id, held_ack FROM messages
        WHERE session_id = $1 AND held_ack IS NOT NULL AND status <> 'queued' AND ${HELD_RANK_SQL} > ${RANK_SQL} ORDER BY seq, id`,
      [sessionId],
    );
    return rows.map((r) => ({ waMessageId: r.wa_message_id, status: r.held_ack }));
  }

  /**
   * An inbound message's media reference after the sender's phone uploaded the media again (issue 19 item 9): the
   * new CDN path replaces the expired one. Inbound rows only; false when there is no such row.
   */
  async updateMediaRef(id: string, ref: MediaRef): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.db.query(
      `UPDATE messages SET media_ref = $2 WHERE id = $1 AND direction = 'in' AND media_ref IS NOT NULL`,
      [id, json(ref)],
    );
    return affected === 1;
  }

  /**
   * The people the session has 1:1 chats with in its log (`…@s.whatsapp.net`), most recent first, at most `limit`:
   * the default audience of a status post (CONTRACT 13, "all contacts").
   */
  async contactChatJids(sessionId: string, limit: number): Promise<string[]> {
    const rows: Array<{ chat_jid: string }> = await this.db.query(
      `SELECT chat_jid FROM messages WHERE session_id = $1 AND chat_jid LIKE '%@s.whatsapp.net'
        GROUP BY chat_jid ORDER BY max(created_at) DESC LIMIT $2`,
      [sessionId, limit],
    );
    return rows.map((r) => r.chat_jid);
  }
}

/** The row an `UPDATE … RETURNING` of at most one row changed. TypeORM answers an UPDATE with `[rows, affected]`. */
async function updatedRow(q: Pick<DataSource, 'query'>, sql: string, params: unknown[]): Promise<MessageRow | null> {
  const [rows]: [RawRow[], number] = await q.query(sql, params);
  return rows[0] ? toRow(rows[0]) : null;
}
