import { Injectable } from '@nestjs/common';
import type { Role } from '@app/contracts';
import { Db, type Queryable, type Tx } from '../pg';

export interface Invitation {
  id: string;
  organizationId: string;
  email: string;
  role: Role;
  expiresAt: Date;
  createdBy: string | null;
  createdAt: Date;
}

interface InvitationColumns {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  expires_at: Date;
  created_by: string | null;
  created_at: Date;
}

const toInvitation = (r: InvitationColumns): Invitation => ({
  id: r.id,
  organizationId: r.organization_id,
  email: r.email,
  role: r.role,
  expiresAt: r.expires_at,
  createdBy: r.created_by,
  createdAt: r.created_at,
});

const COLUMNS = 'id, organization_id, email, role, expires_at, created_by, created_at';
const PENDING = 'accepted_at IS NULL AND withdrawn_at IS NULL AND expires_at > now()';

/** Invitations to join an organization: the token is stored as its SHA-256 only, and used once. */
@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: Db) {}

  async create(inv: Invitation & { tokenHash: string }, tx: Tx): Promise<void> {
    await tx.query(
      `INSERT INTO invitations (id, organization_id, email, role, token_hash, expires_at, created_by, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
      [inv.id, inv.organizationId, inv.email, inv.role, inv.tokenHash, inv.expiresAt, inv.createdBy, inv.createdAt],
    );
  }

  async listPending(organizationId: string): Promise<Invitation[]> {
    const rows = await this.db.query<InvitationColumns>(`SELECT ${COLUMNS} FROM invitations WHERE organization_id = $1 AND ${PENDING} ORDER BY id`, [organizationId]);
    return rows.map(toInvitation);
  }

  async countPending(organizationId: string, manager: Queryable = this.db): Promise<number> {
    const rows = await manager.query<{ n: number }>(`SELECT count(*)::int AS n FROM invitations WHERE organization_id = $1 AND ${PENDING}`, [organizationId]);
    return rows[0].n;
  }

  /** False when the organization has no such pending invitation. */
  async withdraw(organizationId: string, id: string, tx: Tx): Promise<Invitation | null> {
    const rows = await tx.query<InvitationColumns>(
      `UPDATE invitations SET withdrawn_at = now() WHERE id = $1 AND organization_id = $2 AND accepted_at IS NULL AND withdrawn_at IS NULL RETURNING ${COLUMNS}`,
      [id, organizationId],
    );
    return rows[0] ? toInvitation(rows[0]) : null;
  }

  /** Marks the pending invitation of this token used, in `tx`, and returns it; null when expired, used or withdrawn. */
  async consume(tokenHash: string, tx: Tx): Promise<Invitation | null> {
    const rows = await tx.query<InvitationColumns>(
      `UPDATE invitations SET accepted_at = now() WHERE token_hash = $1 AND ${PENDING} RETURNING ${COLUMNS}`,
      [tokenHash],
    );
    return rows[0] ? toInvitation(rows[0]) : null;
  }
}
