import { Injectable } from '@nestjs/common';
import type { AckStatus, MessageStatus } from '@app/contracts';
import { OUTBOUND_STATUS_RANK } from '@app/contracts';
import { Db, type Tx, preparedStatement } from '../pg';
import { AckOutcome, MemberAckOutcome, MESSAGE_COLUMNS, MessageRawRow, RANK_SQL, rankSql, toMessageRow } from './message-rows';

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
   RETURNING ${MESSAGE_COLUMNS}`,
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
   RETURNING ${MESSAGE_COLUMNS}, agg.old_status`,
);

/** Receipts of the messages a session sent (`messages.status`, `held_ack`, `member_acks`): forward only. */
@Injectable()
export class MessageAcksRepository {
  constructor(private readonly db: Db) {}

  /**
   * A receipt for an outbound message: a sent one moves forward only (sent → delivered → read → played) and comes back
   * `moved`; a queued one keeps the ack on its row (`held`, the highest seen) until `markSent` hands it back, so a
   * crash in between loses nothing. null: nothing to do (not ours, not outbound, not forward, failed).
   */
  async applyAck(sessionId: string, waMessageId: string, status: AckStatus, manager?: Tx): Promise<AckOutcome | null> {
    const rows = await (manager ?? this.db).prepared<MessageRawRow>(APPLY_ACK, [sessionId, waMessageId, status, OUTBOUND_STATUS_RANK[status]]);
    if (!rows[0]) return null;
    return rows[0].status === 'queued' ? { held: true } : { moved: toMessageRow(rows[0]) };
  }

  /**
   * A group member's receipt for a message we sent: the member's furthest step kept on the row (`member_acks`), and the
   * message's own status moved to what every one of `members` (the group minus ourselves) has reached. null: nothing
   * changed (unknown, not outbound, failed, or not forward for this member).
   */
  async applyMemberAck(sessionId: string, waMessageId: string, member: string, status: AckStatus, members: string[], manager?: Tx): Promise<MemberAckOutcome | null> {
    const rows = await (manager ?? this.db).prepared<MessageRawRow & { old_status: MessageStatus }>(APPLY_MEMBER_ACK, [sessionId, waMessageId, member, status, members]);
    if (!rows[0]) return null;
    return { row: toMessageRow(rows[0]), moved: rows[0].status !== rows[0].old_status };
  }

  /**
   * Acks kept on messages that are recorded sent by now but were not applied (their gateway stopped in between):
   * what a new holder of the session applies first.
   */
  async heldAcksOf(sessionId: string): Promise<Array<{ waMessageId: string; status: AckStatus }>> {
    const rows = await this.db.query<{ wa_message_id: string; held_ack: AckStatus }>(
      `SELECT wa_message_id, held_ack FROM messages
        WHERE session_id = $1 AND held_ack IS NOT NULL AND status <> 'queued' AND ${HELD_RANK_SQL} > ${RANK_SQL} ORDER BY seq, id`,
      [sessionId],
    );
    return rows.map((r) => ({ waMessageId: r.wa_message_id, status: r.held_ack }));
  }
}
