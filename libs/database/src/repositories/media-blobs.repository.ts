import { Injectable } from '@nestjs/common';
import { Db } from '../pg';

/** Where a stored medium belongs: its message, and the session and organization of that message. */
export interface MediaBlobKey {
  organizationId: string;
  sessionId: string;
  messageId: string;
}

/** A medium as kept: the decrypted bytes with their mimetype, size and sha256 (hex). libs/media's stores keep this too. */
export interface MediaBlob {
  mimetype: string;
  size: number;
  sha256: string;
  bytes: Buffer;
}

/**
 * The `media_blobs` table: inbound media kept in PostgreSQL when the operator chose MEDIA_STORE=postgres. The gateway's
 * eager download writes a row once per message; the API reads it. A row goes with its message (and so with its session
 * and organization).
 */
@Injectable()
export class MediaBlobsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Stores the bytes of a message's medium; false when that message already has them (the first write stands). A
   * message that no longer exists (deleted meanwhile) fails on its foreign key: nothing to keep.
   */
  async put(key: MediaBlobKey, blob: MediaBlob): Promise<boolean> {
    const rows = await this.db.query<unknown>(
      `INSERT INTO media_blobs (message_id, organization_id, session_id, mimetype, size, sha256, bytes)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (message_id) DO NOTHING RETURNING message_id`,
      [key.messageId, key.organizationId, key.sessionId, blob.mimetype, blob.size, blob.sha256, blob.bytes],
    );
    return rows.length === 1;
  }

  /** The medium of a message of this session and organization, or null. */
  async get(key: MediaBlobKey): Promise<MediaBlob | null> {
    const rows = await this.db.query<{ mimetype: string; size: number; sha256: string; bytes: Buffer }>(
      `SELECT mimetype, size, sha256, bytes FROM media_blobs WHERE message_id = $1 AND session_id = $2 AND organization_id = $3`,
      [key.messageId, key.sessionId, key.organizationId],
    );
    return rows[0] ?? null;
  }

  async has(messageId: string): Promise<boolean> {
    const rows = await this.db.query<unknown>(`SELECT 1 FROM media_blobs WHERE message_id = $1`, [messageId]);
    return rows.length > 0;
  }

  async deleteMessage(messageId: string): Promise<boolean> {
    return (await this.deleted(`DELETE FROM media_blobs WHERE message_id = $1`, messageId)) > 0;
  }

  /** Deletes a session's media; the number of rows deleted. */
  async deleteSession(sessionId: string): Promise<number> {
    return this.deleted(`DELETE FROM media_blobs WHERE session_id = $1`, sessionId);
  }

  /** Deletes an organization's media; the number of rows deleted. */
  async deleteOrganization(organizationId: string): Promise<number> {
    return this.deleted(`DELETE FROM media_blobs WHERE organization_id = $1`, organizationId);
  }

  private async deleted(sql: string, id: string): Promise<number> {
    return this.db.affected(sql, [id]);
  }
}
