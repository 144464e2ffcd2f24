import { Injectable } from '@nestjs/common';
import type { ChannelView } from '@app/contracts';
import { Db } from '../pg';

/** What is known of a followed channel: its jid, and whatever the network last said of it. */
export type FollowedChannelFacts = { jid: string } & Partial<Omit<ChannelView, 'jid'>>;

/** At most this many channels are listed per session (WhatsApp lets an account follow a few thousand). */
export const FOLLOWED_CHANNELS_LISTED = 5000;

interface RawRow {
  jid: string;
  name: string | null;
  description: string | null;
  invite: string | null;
  subscribers: number | null;
}

/** PostgreSQL text cannot hold NUL, but a name on the network can. */
const storable = (text: string | null | undefined) => (typeof text === 'string' ? text.replace(/\0/g, '') : (text ?? null));

/**
 * The `followed_channels` table: the channels a session's account follows as the gateway knows them (followed through
 * the API, or seen posting). Written and read by the gateway; the Baileys engine lists them from here.
 */
@Injectable()
export class FollowedChannelsRepository {
  constructor(private readonly db: Db) {}

  /** Oldest followed first; `name` '' while the network has not named the channel yet. */
  async list(sessionId: string): Promise<Array<ChannelView & { named: boolean }>> {
    const rows = await this.db.query<RawRow>(
      `SELECT jid, name, description, invite, subscribers FROM followed_channels WHERE session_id = $1
        ORDER BY followed_at, jid LIMIT $2`,
      [sessionId, FOLLOWED_CHANNELS_LISTED],
    );
    return rows.map((r) => ({ jid: r.jid, name: r.name ?? '', description: r.description, invite: r.invite, subscribers: r.subscribers, named: r.name !== null }));
  }

  /**
   * The account follows this channel: added if new; the facts given (not undefined) replace the stored ones, and a
   * null keeps what was stored (an answer that did not tell the invite does not forget it).
   */
  async remember(organizationId: string, sessionId: string, channel: FollowedChannelFacts): Promise<void> {
    const subscribers = typeof channel.subscribers === 'number' && Number.isSafeInteger(channel.subscribers) ? Math.min(Math.max(channel.subscribers, 0), 2 ** 31 - 1) : null;
    await this.db.query(
      `INSERT INTO followed_channels AS f (session_id, organization_id, jid, name, description, invite, subscribers)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (session_id, jid) DO UPDATE SET
         name = COALESCE(EXCLUDED.name, f.name), description = COALESCE(EXCLUDED.description, f.description),
         invite = COALESCE(EXCLUDED.invite, f.invite), subscribers = COALESCE(EXCLUDED.subscribers, f.subscribers),
         updated_at = now()
       WHERE (EXCLUDED.name, EXCLUDED.description, EXCLUDED.invite, EXCLUDED.subscribers) IS DISTINCT FROM (NULL, NULL, NULL, NULL)`,
      [sessionId, organizationId, channel.jid, storable(channel.name), storable(channel.description), storable(channel.invite), subscribers],
    );
  }

  /** The account no longer follows this channel. */
  async forget(sessionId: string, jid: string): Promise<void> {
    await this.db.query(`DELETE FROM followed_channels WHERE session_id = $1 AND jid = $2`, [sessionId, jid]);
  }
}
