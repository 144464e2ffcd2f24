import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the gateway holding the session tries to connect it again, while a reconnect is scheduled (null otherwise): the
 * Session view's `nextAttemptAt` (CONTRACT 4). Until now the time was appended to `last_reason`
 * (`…; next attempt at <ISO>`); from here `last_reason` is the reason alone (the view's `statusReason`, the same words
 * as `session.status`'s reason), and rows written before are cut back to it.
 */
export class SessionNextAttemptAt1795810000000 implements MigrationInterface {
  name = 'SessionNextAttemptAt1795810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions ADD COLUMN next_attempt_at timestamptz');
    await q.query(
      `UPDATE sessions SET next_attempt_at = substring(last_reason FROM '; next attempt at (\\S+)$')::timestamptz,
                           last_reason = regexp_replace(last_reason, '; next attempt at \\S+$', '')
        WHERE last_reason ~ '; next attempt at \\S+$'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE sessions SET last_reason = last_reason || '; next attempt at ' || to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        WHERE next_attempt_at IS NOT NULL`,
    );
    await q.query('ALTER TABLE sessions DROP COLUMN next_attempt_at');
  }
}
