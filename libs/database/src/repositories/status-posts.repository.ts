import { Injectable } from '@nestjs/common';
import type { StatusPostOptions } from '@app/contracts';
import { Db } from '../pg';
import type { OwnedSession } from './sessions.repository';

/**
 * The `status_posts` table: how a status post (CONTRACT 13; a `messages` row to status@broadcast with the same id)
 * goes out — who may see it and its background. The API writes it just before it accepts the message; the gateway
 * reads it when it sends the message.
 */
@Injectable()
export class StatusPostsRepository {
  constructor(private readonly db: Db) {}

  /** Written before the message row (same id). A second write for one id changes nothing. */
  async record(messageId: string, session: OwnedSession, options: StatusPostOptions): Promise<void> {
    await this.db.query(
      `INSERT INTO status_posts (message_id, session_id, audience, background_color) VALUES ($1, $2, $3::text[], $4)
        ON CONFLICT (message_id) DO NOTHING`,
      [messageId, session.id, options.audience, options.backgroundColor],
    );
  }

  /** The post's options, or null for a message that is not a status post. */
  async optionsOf(messageId: string): Promise<StatusPostOptions | null> {
    const rows = await this.db.query<{ audience: string[]; background_color: string | null }>(
      `SELECT audience, background_color FROM status_posts WHERE message_id = $1`,
      [messageId],
    );
    return rows[0] ? { audience: rows[0].audience, backgroundColor: rows[0].background_color } : null;
  }
}
