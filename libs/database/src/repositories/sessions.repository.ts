import { Injectable } from '@nestjs/common';
import type { SessionStatus, SyncHistoryMode } from '@app/contracts';
import { Session } from '../entities/session.entity';
import { Db, EntityReader, EntityTable, PreparedStatement, type Queryable, type Tx, preparedStatement } from '../pg';
import { keysetPage, PageRequest, RowPage } from './keyset-page';

declare const owned: unique symbol;

/**
 * A session whose organization was checked against the caller's: only `SessionsRepository.findInOrganization` makes
 * one (the brand is a symbol no other module can name, so an object literal cannot pass for it). Repository methods
 * the API calls for one organization's session take it instead of a bare id, so an id straight from a request does
 * not compile there (docs/decisions.md, "Tenant scope in the types").
 */
export type OwnedSession = Session & { readonly [owned]: true };

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
  /** sends per minute: also the pace of a backlog after an outage (always read; optional for callers that build rows) */
  ratePerMin?: number;
  /** the proxy URL sealed with SecretBox, or null (direct) */
  proxyUrlSealed?: string | null;
  /** what history to store from the phone on pairing (absent: `none`) */
  syncHistory?: SyncHistoryMode;
  /** reject incoming calls (absent: false) */
  rejectCalls?: boolean;
  /** announce contacts' statuses (`status.received`); absent = off */
  receiveStatus?: boolean;
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
  /** when the next connect attempt is, while one is scheduled; null otherwise */
  nextAttemptAt?: Date | null;
}

/** What a runtime write is conditional on (see `SessionsRepository.patchRuntimeMany`). */
export interface RuntimeFence {
  /** the token taken with the lease this writer holds, or null while it holds none */
  leaseToken: number | null;
  /** the writer's gateway: without a token, it may write only while the row places the session there */
  gatewayId: string;
}

/** What an owner may change through the API. */
export type SessionSettingsPatch = Partial<Pick<Session, 'label' | 'autoRead' | 'presenceTyping' | 'ratePerMin' | 'ratePerHour' | 'isAdminSession' | 'proxyUrlSealed' | 'proxyUrlShown' | 'syncHistory' | 'rejectCalls' | 'receiveStatus'>>;

interface SessionRuntimeColumns {
  id: string;
  organization_id: string;
  status: SessionStatus;
  desired_state: 'running' | 'stopped';
  phone_number: string | null;
  auto_read: boolean;
  presence_typing: boolean;
  rate_per_min: number;
  proxy_url: string | null;
  sync_history: SyncHistoryMode;
  reject_calls: boolean;
  receive_status: boolean;
}

const RUNTIME_COLUMNS: Record<keyof SessionRuntimePatch, string> = {
  status: 'status',
  desiredState: 'desired_state',
  phoneNumber: 'phone_number',
  waJid: 'wa_jid',
  waLid: 'wa_lid',
  lastConnectedAt: 'last_connected_at',
  lastReason: 'last_reason',
  nextAttemptAt: 'next_attempt_at',
};
const TIMESTAMP_COLUMNS: ReadonlySet<keyof SessionRuntimePatch> = new Set(['lastConnectedAt', 'nextAttemptAt']);

/**
 * A session of an organization by id: every API request on a session starts with it (a send above all), so it is a
 * prepared statement mapped from the entity's metadata instead of TypeORM's query builder and entity transformer.
 */
const SESSIONS = new EntityTable(Session);
const FIND_IN_ORGANIZATION = new EntityReader(Session, 'sessions_find_in_organization', 'id = $1 AND organization_id = $2');

/**
 * The runners' grouped reads and lease tokens (a failover's adoptions: one statement per group), prepared: planned once
 * per connection instead of on every group.
 */
const FIND_RUNTIME_MANY = preparedStatement(
  'sessions_find_runtime_many',
  'SELECT id, organization_id, status, desired_state, phone_number, auto_read, presence_typing, rate_per_min, proxy_url, sync_history, reject_calls, receive_status FROM sessions WHERE id = ANY($1::text[])',
);
const TAKE_LEASE_TOKENS = preparedStatement(
  'sessions_take_lease_tokens',
  'UPDATE sessions SET lease_token = lease_token + 1 WHERE id = ANY($1::text[]) RETURNING id, lease_token',
);

/** The runners' fenced writes, one prepared statement per set of columns written (a handful: status, +account, …). */
const PATCH_RUNTIME = new Map<string, PreparedStatement>();
function patchRuntimeStatement(keys: ReadonlyArray<keyof SessionRuntimePatch>): PreparedStatement {
  const shape = keys.join(',');
  let statement = PATCH_RUNTIME.get(shape);
  if (!statement) {
    const columns = keys.map((key) => RUNTIME_COLUMNS[key]);
    const sets = keys.map((key) => `${RUNTIME_COLUMNS[key]} = u.${RUNTIME_COLUMNS[key]}${TIMESTAMP_COLUMNS.has(key) ? '::timestamptz' : ''}`);
    const arrays = Array.from({ length: 3 + keys.length }, (_, i) => `$${i + 1}::text[]`).join(', ');
    // named by a bit per column (PostgreSQL cuts names at 63 characters, and the column list is longer)
    const bits = (Object.keys(RUNTIME_COLUMNS) as Array<keyof SessionRuntimePatch>).reduce((n, key, i) => (keys.includes(key) ? n | (1 << i) : n), 0);
    statement = preparedStatement(
      `sessions_patch_runtime_${bits}`,
      `UPDATE sessions s SET ${sets.length > 0 ? `${sets.join(', ')}, ` : ''}updated_at = now()
         FROM unnest(${arrays}) AS u(id, lease_token, gateway_id${columns.map((c) => `, ${c}`).join('')})
        WHERE s.id = u.id AND (CASE WHEN u.lease_token IS NOT NULL THEN s.lease_token = u.lease_token::bigint ELSE s.gateway_id = u.gateway_id END)
        RETURNING s.id`,
    );
    PATCH_RUNTIME.set(shape, statement);
  }
  return statement;
}

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
  ratePerMin: r.rate_per_min,
  proxyUrlSealed: r.proxy_url,
  syncHistory: r.sync_history,
  rejectCalls: r.reject_calls,
  receiveStatus: r.receive_status,
});

/**
 * The upsert that hands out a session's next `count` message acceptance numbers (`session_message_seqs`, a narrow row
 * per session owned here: bumping a column of the wide, much-read `sessions` row left a dead version of it per message
 * for every index read of the session to walk, migration SessionMessageSeqs), for a statement that composes it
 * (`MessageQueueRepository.insertOutbound` and its bulk form, as the first step of its CTE): `sessionParam` is that
 * statement's placeholder of the session id, `countParam` an integer expression (`'1'` for one message). It returns the
 * last number taken (`message_seq`), so the numbers are `message_seq - count + 1 … message_seq`, in the order of the
 * batch. The counter row's lock is held until the statement's transaction commits (an autocommit statement: until it
 * ends), so a second accept of the session waits for the first to commit and numbers are handed out in commit order: a
 * visible number means every lower one has committed. The session row is read FOR SHARE: a lock, not a new version of
 * the row, that waits for a change of the session under way (a stop, a deletion) and then checks `where` again on what
 * it committed, so an accept and a change of the session are one after the other exactly as when the accept updated
 * the row; no session row (or none matching `where`), no number, and the composing statement inserts nothing. A
 * statement that takes a number and then inserts nothing (a conflict) leaves a gap, which is harmless: only the order
 * of the numbers matters.
 */
export function takeMessageSeqsSql(sessionParam: string, countParam: string, where = '', returning = ''): string {
  return `INSERT INTO session_message_seqs AS c (session_id, message_seq)
       SELECT id, (${countParam})::bigint FROM sessions WHERE id = ${sessionParam}${where} FOR SHARE
     ON CONFLICT (session_id) DO UPDATE SET message_seq = c.message_seq + EXCLUDED.message_seq
     RETURNING message_seq${returning}`;
}

/**
 * `takeMessageSeqsSql` for the accepts of sends that did not read the session first (`MessageQueueRepository
 * .insertAcceptedMany`, a group of concurrent plain sends): the numbers are taken only when the session is of the
 * organization and in one of the statuses (the placeholder of a text[]), so the statement that composes it inserts
 * nothing otherwise; it returns the session's `wa_jid` (the messages' sender) and `gateway_id` (where to signal them)
 * with the last number. The same lock, held the same way.
 */
export function takeMessageSeqsIfSendableSql(sessionParam: string, organizationParam: string, statusesParam: string, countParam: string): string {
  const session = (column: string) => `(SELECT ${column} FROM sessions WHERE id = c.session_id) AS ${column}`;
  return takeMessageSeqsSql(
    sessionParam,
    countParam,
    ` AND organization_id = ${organizationParam} AND status = ANY(${statusesParam})`,
    `, ${session('wa_jid')}, ${session('gateway_id')}`,
  );
}

/**
 * The session's `presenceTyping` as a scalar subquery, for a statement that reads it together with what it reads
 * (`MessageQueueRepository.nextQueued`: the sender reads the setting with each batch of queued messages, so a PATCH
 * applies to the messages read after it, without a query of its own). `sessionParam` is that statement's placeholder
 * of the session id.
 */
export function presenceTypingSql(sessionParam: string): string {
  return `(SELECT presence_typing FROM sessions WHERE id = ${sessionParam})`;
}

/**
 * The session's `autoRead` as a scalar subquery, for a statement that needs it with what it writes
 * (`MessagesRepository.insert`: a received message counts as unread in its chat only when the session does not mark
 * what it receives read). `sessionParam` is that statement's placeholder of the session id.
 */
export function autoReadSql(sessionParam: string): string {
  return `(SELECT auto_read FROM sessions WHERE id = ${sessionParam})`;
}

/**
 * The sessions table. The API reads and writes whole rows through the entity; the gateway's runner
 * writes a few columns, often, in plain SQL.
 */
@Injectable()
export class SessionsRepository {
  constructor(private readonly db: Db) {}

  /** How many of the organization's sessions are in each status (statuses with none are absent): the Overview. */
  async countByStatus(organizationId: string): Promise<Map<string, number>> {
    const rows = await this.db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM sessions WHERE organization_id = $1 GROUP BY status`,
      [organizationId],
    );
    return new Map(rows.map((r) => [r.status, r.n]));
  }

  async create(session: Session, manager: Queryable = this.db): Promise<Session> {
    return SESSIONS.insert(manager, session);
  }

  /** What the organization's session quota counts: every session it holds, running or not. */
  async countInOrganization(organizationId: string, manager: Queryable = this.db): Promise<number> {
    const [row] = await manager.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE organization_id = $1', [organizationId]);
    return row.n;
  }

  /** The caller's organization's session, checked (another organization's session is not found). */
  async findInOrganization(organizationId: string, id: string): Promise<OwnedSession | null> {
    // the one place an OwnedSession is made: the row was read with `organization_id = $2`
    return (await FIND_IN_ORGANIZATION.findOne(this.db, [id, organizationId])) as OwnedSession | null;
  }

  async existsInOrganization(organizationId: string, id: string): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM sessions WHERE id = $1 AND organization_id = $2', [id, organizationId])).length > 0;
  }

  /** `ids`: only these sessions (a session-scoped key's view); null: all of the organization. */
  async page(organizationId: string, page: PageRequest, ids: readonly string[] | null = null): Promise<RowPage<Session>> {
    return ids
      ? keysetPage(this.db, SESSIONS, 'organization_id = $1 AND id = ANY($2::text[])', [organizationId, [...ids]], page)
      : keysetPage(this.db, SESSIONS, 'organization_id = $1', [organizationId], page);
  }

  /** `manager`: the change's transaction (its audit entry commits with it). */
  async patchSettings(session: OwnedSession, patch: SessionSettingsPatch, manager?: Tx): Promise<void> {
    if (Object.keys(patch).length > 0) await SESSIONS.update(manager ?? this.db, { ...patch, updatedAt: new Date() }, 'id = $1', [session.id]);
  }

  /** Recorded by the API when the session's gateway is gone and so cannot record it itself. */
  async markStopped(session: OwnedSession): Promise<void> {
    await SESSIONS.update(this.db, { desiredState: 'stopped', status: 'stopped', lastReason: 'stop_requested', nextAttemptAt: null, updatedAt: new Date() }, 'id = $1', [session.id]);
  }

  /** Moves a session only if it is still where the caller saw it; true when it moved (racing movers: one wins). */
  async moveToGateway(id: string, from: string | null, to: string): Promise<boolean> {
    return (await SESSIONS.update(this.db, { gatewayId: to, updatedAt: new Date() }, 'id = $1 AND gateway_id IS NOT DISTINCT FROM $2', [id, from])) > 0;
  }

  /**
   * Many moves off `from` in one statement, each only if its row is still there (racing movers: one wins per row).
   * Answers the ids moved. With `manager`, inside that transaction (the leader's fence).
   */
  async moveManyToGateway(from: string, moves: ReadonlyArray<{ id: string; to: string }>, manager?: Tx): Promise<string[]> {
    if (moves.length === 0) return [];
    const rows = await (manager ?? this.db).query<{ id: string }>(
      `UPDATE sessions s SET gateway_id = m.to_gateway, updated_at = now()
       FROM unnest($1::text[], $2::text[]) AS m(id, to_gateway)
       WHERE s.id = m.id AND s.gateway_id = $3
       RETURNING s.id`,
      [moves.map((m) => m.id), moves.map((m) => m.to), from],
    );
    return rows.map((r) => r.id);
  }

  async delete(id: string): Promise<void> {
    await this.db.query('DELETE FROM sessions WHERE id = $1', [id]);
  }

  async deleteOwned(session: OwnedSession): Promise<void> {
    await this.db.query('DELETE FROM sessions WHERE id = $1 AND organization_id = $2', [session.id, session.organizationId]);
  }

  /** Sessions that should run, per gateway (gateways without any are absent). */
  async placedCountsOn(gatewayIds: string[], manager?: Tx): Promise<Map<string, number>> {
    const rows = await (manager ?? this.db).query<{ gateway_id: string; n: string }>(
      `SELECT gateway_id, count(*) AS n FROM sessions WHERE desired_state = 'running' AND gateway_id = ANY($1) GROUP BY gateway_id`,
      [gatewayIds],
    );
    return new Map(rows.map((r) => [r.gateway_id, Number(r.n)]));
  }

  /** One organization's sessions that should run, per gateway (what a tenant may see of the fleet). */
  async placedCountsOfOrganization(organizationId: string): Promise<Map<string, number>> {
    const rows = await this.db.query<{ gateway_id: string; n: string }>(
      `SELECT gateway_id, count(*) AS n FROM sessions WHERE organization_id = $1 AND desired_state = 'running' AND gateway_id IS NOT NULL GROUP BY gateway_id`,
      [organizationId],
    );
    return new Map(rows.map((r) => [r.gateway_id, Number(r.n)]));
  }

  /** What a send accepted outside the API (a campaign's message, a due scheduled send) needs of its session. */
  async sendProfile(id: string): Promise<{ ratePerMin: number; ratePerHour: number; waJid: string | null; gatewayId: string | null } | null> {
    const rows = await this.db.query<{ rate_per_min: number; rate_per_hour: number; wa_jid: string | null; gateway_id: string | null }>(
      `SELECT rate_per_min, rate_per_hour, wa_jid, gateway_id FROM sessions WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    return r ? { ratePerMin: r.rate_per_min, ratePerHour: r.rate_per_hour, waJid: r.wa_jid, gatewayId: r.gateway_id } : null;
  }

  async findRuntime(id: string): Promise<SessionRuntimeRow | null> {
    return (await this.findRuntimeMany([id])).get(id) ?? null;
  }

  /** `findRuntime` for many sessions in one statement (the adopting gateway's grouped reads); absent ids are left out. */
  async findRuntimeMany(ids: readonly string[]): Promise<Map<string, SessionRuntimeRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.prepared<SessionRuntimeColumns>(FIND_RUNTIME_MANY, [ids]);
    return new Map(rows.map((r) => [r.id, toRuntimeRow(r)]));
  }

  /**
   * Takes the next fencing token of the session's lease. Called by a gateway right after it acquired the lease, so
   * the previous holder's writes (fenced on its own token) are refused from now on.
   */
  async takeLeaseToken(id: string): Promise<number> {
    const token = (await this.takeLeaseTokens([id])).get(id);
    if (token === undefined) throw new Error(`session ${id} not found`);
    return token;
  }

  /**
   * `takeLeaseToken` for many distinct sessions in one statement (the adopting gateway's grouped lease takes): each
   * row's counter moves by one, as with one statement per session. Absent ids are left out of the answer.
   */
  async takeLeaseTokens(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.prepared<{ id: string; lease_token: string }>(TAKE_LEASE_TOKENS, [ids]);
    return new Map(rows.map((r) => [r.id, Number(r.lease_token)]));
  }

  /**
   * The runners' writes, fenced, for distinct sessions whose patches name the same columns, in one statement (the
   * runners' status writes grouped per tick). Each row is written only under its own fence: with a lease token, only
   * while that token is still the row's (nobody took the lease since); without one (a runner not yet holding the
   * lease), only while the row still places the session on `gatewayId`. Answers the ids written; the others were
   * refused: their writer no longer holds the session.
   */
  async patchRuntimeMany(writes: ReadonlyArray<{ id: string; patch: SessionRuntimePatch; fence: RuntimeFence }>): Promise<Set<string>> {
    if (writes.length === 0) return new Set();
    const keys = (Object.keys(RUNTIME_COLUMNS) as Array<keyof SessionRuntimePatch>).filter((k) => writes[0].patch[k] !== undefined);
    const values: unknown[] = [
      writes.map((w) => w.id),
      writes.map((w) => (w.fence.leaseToken !== null ? String(w.fence.leaseToken) : null)),
      writes.map((w) => w.fence.gatewayId),
    ];
    for (const key of keys) {
      values.push(writes.map((w) => { const v = w.patch[key]; return v instanceof Date ? v.toISOString() : (v ?? null); }));
    }
    const rows = await this.db.prepared<{ id: string }>(patchRuntimeStatement(keys), values);
    return new Set(rows.map((r) => r.id));
  }

  /** Of the given sessions, those no longer placed on `gatewayId` (moved elsewhere, or deleted). */
  async notPlacedOn(ids: string[], gatewayId: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM unnest($1::text[]) AS held(id)
       WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = held.id AND s.gateway_id = $2)`,
      [ids, gatewayId],
    );
    return rows.map((r) => r.id);
  }

  /** Gateways that sessions which should be running are placed on, with how many (the fleet supervisor's orphan search). */
  async resumableCountsByGateway(): Promise<Map<string, number>> {
    const rows = await this.db.query<{ gateway_id: string; n: string }>(
      `SELECT gateway_id, count(*) AS n FROM sessions WHERE gateway_id IS NOT NULL AND desired_state = 'running' AND status <> ALL($1) GROUP BY gateway_id`,
      [NOT_RESUMED],
    );
    return new Map(rows.map((r) => [r.gateway_id, Number(r.n)]));
  }

  /**
   * Sessions a gateway should hold again after a restart (or another takes over): placed there, wanted running, not
   * waiting on the owner; by id, with what a mover needs to announce the move.
   */
  async movableOn(gatewayId: string, limit = 100000): Promise<Array<{ id: string; organizationId: string; status: SessionStatus }>> {
    const rows = await this.db.query<{ id: string; organization_id: string; status: SessionStatus }>(
      `SELECT id, organization_id, status FROM sessions WHERE gateway_id = $1 AND desired_state = 'running' AND status <> ALL($2) ORDER BY id LIMIT $3`,
      [gatewayId, NOT_RESUMED, limit],
    );
    return rows.map((r) => ({ id: r.id, organizationId: r.organization_id, status: r.status }));
  }

  /** When each of `ids` that is `working` now last connected, if at or after `since` (how long a move took to land). */
  async connectedSince(ids: string[], since: Date): Promise<Map<string, Date>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.query<{ id: string; last_connected_at: Date }>(
      `SELECT id, last_connected_at FROM sessions WHERE id = ANY($1) AND status = 'working' AND last_connected_at >= $2`,
      [ids, since],
    );
    return new Map(rows.map((r) => [r.id, new Date(r.last_connected_at)]));
  }
}
