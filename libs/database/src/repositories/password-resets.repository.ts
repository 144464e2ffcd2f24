import { Injectable } from '@nestjs/common';
import { type Tx } from '../pg';

/** Password reset tokens: stored as their SHA-256 only, used once, expiring. */
@Injectable()
export class PasswordResetsRepository {
  async create(reset: { id: string; userId: string; tokenHash: string; expiresAt: Date }, tx: Tx): Promise<void> {
    // a new link replaces the user's earlier ones
    await tx.query(`UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [reset.userId]);
    await tx.query(`INSERT INTO password_resets (id, user_id, token_hash, expires_at) VALUES ($1,$2,$3,$4)`, [reset.id, reset.userId, reset.tokenHash, reset.expiresAt]);
  }

  /** Marks the token used in `tx` and returns its user; null when unknown, used or expired. */
  async consume(tokenHash: string, tx: Tx): Promise<string | null> {
    const rows = await tx.query<{ user_id: string }>(
      `UPDATE password_resets SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id`,
      [tokenHash],
    );
    return rows[0]?.user_id ?? null;
  }
}
