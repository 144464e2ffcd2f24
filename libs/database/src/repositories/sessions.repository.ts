import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { SessionStatus } from '@app/contracts';
import { Session } from '../entities/session.entity';
import { keysetPage, PageRequest, RowPage } from './keyset-page';

/** The fields of a session a gateway runner reads at start. */
export interface SessionRuntimeRow {
  id: string;
  organizationId: string;
  status: SessionStatus;
  desiredState: 'running' | 'stopped';
  phoneNumber: string | null;
  /** mark received messages read */
  autoRead: boolean;
  /** show "typing…" before each text */
  presenceTyping: boolean;
}

/** What a gateway writes about the session it holds. */
export interface SessionRuntimePatch {
  status?: SessionStatus;
  desiredState?: 'running' | 'stopped';
  phoneNumber?: string | null;
  waJid?: string | null;
  waLid?: string | null;
  lastConnectedAt?: Date | null;
  /** the reason of the status, as published in `session.status` */
  lastReason?: string | null;
}

/** What an owner may change through the API. */
export type SessionSettingsPatch = Partial<Pick<Session, 'label' | 'autoRead' | 'presenceTyping' | 'ratePerMin' | 'ratePerHour' | 'isAdminSession'>>;

interface SessionRuntimeColumns {
  id: string;
  organization_id: string;
  status: SessionStatus;
  desired_state: 'running' | 'stopped';
  phone_number: string | null;
  auto_read: boolean;
  presence_typing: boolean;
}

const RUNTIME_COLUMNS: Record<keyof SessionRuntimePatch, string> = {
  status: 'status',
  desiredState: 'desired_state',
  phoneNumber: 'phone_number',
  waJid: 'wa_jid',
  waLid: 'wa_lid',
  lastConnectedAt: 'last_connected_at',
  lastReason: 'last_reason',
};

/** Statuses a restarted gateway does not bring back by itself: the owner has to act first. */
const NOT_RESUMED = ['stopped', 'failed', 'logged_out'];

const toRuntimeRow = (r: SessionRuntimeColumns): SessionRuntimeRow => ({
  id: r.id,
  organizationId: r.organization_id,
  status: r.status,
  desiredState: r.desired_state,
  phoneNumber: r.phone_number,
  autoRead: r.auto_read,
  presenceTyping: r.presence_typing,
});

/**
 * The sessions table. The API reads and writes whole rows through the entity; the gateway's runner
 * writes a few columns, often, in plain SQL.
 */
@Injectable()
export class SessionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get repo() {
    return this.db.getRepository(Session);
  }

  async create(session: Session): Promise<Session> {
    return this.repo.save(this.repo.create(session));
  }

  /** Another organization's session is not found. */
  async findInOrganization(organizationId: string, id: string): Promise<Session | null> {
    return this.repo.findOne({ where: { id, organizationId } });
  }

  async existsInOrganization(organizationId: string, id: string): Promise<boolean> {
    return this.repo.exists({ where: { id, organizationId } });
  }

  async page(organizationId: string, page: PageRequest): Promise<RowPage<Session>> {
    return keysetPage(this.repo, { organizationId }, page);
  }

  async patchSettings(id: string, patch: SessionSettingsPatch): Promise<void> {
    if (Object.keys(patch).length > 0) await this.repo.update({ id }, { ...patch, updatedAt: new Date() });
  }

  /** Recorded by the API when the session's gateway is gone and so cannot record it itself. */
  async markStopped(id: string): Promise<void> {
    await this.repo.update({ id }, { desiredState: 'stopped', status: 'stopped', lastReason: 'stop_requested', updatedAt: new Date() });
  }

  /** Moves the session only if it is still where the caller saw it, so two concurrent moves do not both win. */
  /** Moves a session only if it is still where the caller saw it; true when it moved (racing movers: one wins). */
  async moveToGateway(id: string, from: string | null, to: string): Promise<boolean> {
    const result = await this.repo
      .createQueryBuilder()
      .update()
      .set({ gatewayId: to, updatedAt: new Date() })
      .where('id = :id AND gateway_id IS NOT DISTINCT FROM :from', { id, from })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }

  async deleteInOrganization(organizationId: string, id: string): Promise<void> {
    await this.repo.delete({ id, organizationId });
  }

  /** Sessions that should run, per gateway (gateways without any are absent). */
  async placedCountsOn(gatewayIds: string[]): Promise<Map<string, number>> {
    const rows: Array<{ gateway_id: string; n: string }> = await this.db.query(
      `SELECT gateway_id, count(*) AS n FROM sessions WHERE desired_state = 'running' AND gateway_id = ANY($1) GROUP BY gateway_id`,
      [gatewayIds],
    );
    return new Map(rows.map((r) => [r.gateway_id, Number(r.n)]));
  }

  async findRuntime(id: string): Promise<SessionRuntimeRow | null> {
    const rows: SessionRuntimeColumns[] = await this.db.query(
      'SELECT id, organization_id, status, desired_state, phone_number, auto_read, presence_typing FROM sessions WHERE id = $1',
      [id],
    );
    return rows[0] ? toRuntimeRow(rows[0]) : null;
  }

  async patchRuntime(id: string, patch: SessionRuntimePatch): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    for (const [key, value] of Object.entries(patch) as [keyof SessionRuntimePatch, unknown][]) {
      if (value === undefined) continue;
      values.push(value);
      sets.push(`${RUNTIME_COLUMNS[key]} = $${values.length}`);
    }
    if (sets.length === 0) return;
    await this.db.query(`UPDATE sessions SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, values);
  }

  /** Sessions a gateway should hold again after a restart: placed there, wanted running, not waiting on the owner. */
  async resumableOn(gatewayId: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM sessions WHERE gateway_id = $1 AND desired_state = 'running' AND status <> ALL($2) ORDER BY id`,
      [gatewayId, NOT_RESUMED],
    );
    return rows.map((r) => r.id);
  }
}
