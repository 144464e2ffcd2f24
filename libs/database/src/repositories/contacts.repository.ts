import { Injectable } from '@nestjs/common';
import type { ContactFacts, ContactView } from '@app/contracts';
import { newId } from '../ids';
import type { PageRequest, RowPage } from './keyset-page';
import type { SessionScopeWithOrganization } from './session-scope';
import type { OwnedSession } from './sessions.repository';
import { Db, type Tx } from '../pg';

/**
 * The most contacts one session keeps (docs/decisions.md, "Contacts per session"). A contact beyond it is not stored
 * (a known one is still updated): a phone's address book sync cannot grow the table without end.
 */
export const MAX_CONTACTS_PER_SESSION = 10_000;

export interface ContactRow extends ContactView {
  id: string;
  organizationId: string;
  sessionId: string;
  about: string | null;
  pictureUrl: string | null;
  /** a business's verified name, null when none */
  verifiedName: string | null;
  updatedAt: Date;
}

interface Row {
  id: string;
  organization_id: string;
  session_id: string;
  jid: string;
  lid: string | null;
  phone_number: string | null;
  name: string | null;
  push_name: string | null;
  verified_name: string | null;
  is_business: boolean;
  blocked: boolean;
  about: string | null;
  picture_url: string | null;
  updated_at: Date;
}

const COLUMNS = 'id, organization_id, session_id, jid, lid, phone_number, name, push_name, verified_name, is_business, blocked, about, picture_url, updated_at';

const toRow = (r: Row): ContactRow => ({
  id: r.id,
  organizationId: r.organization_id,
  sessionId: r.session_id,
  jid: r.jid,
  lid: r.lid,
  phoneNumber: r.phone_number,
  name: r.name,
  pushName: r.push_name,
  isBusiness: r.is_business,
  blocked: r.blocked,
  about: r.about,
  pictureUrl: r.picture_url,
  verifiedName: r.verified_name,
  updatedAt: r.updated_at,
});

/** PostgreSQL text cannot hold NUL, but a name on the network can: it is dropped rather than failing the write. */
const storable = (text: string | null | undefined): string | null | undefined => (typeof text === 'string' ? text.replace(/\0/g, '') : text);

/** The digits of a `<digits>@s.whatsapp.net` jid, or null. */
const digitsOf = (jid: string): string | null => /^(\d+)@s\.whatsapp\.net$/.exec(jid)?.[1] ?? null;

/** Facts about one jid merged in order (a later source wins per field it names). */
function mergeByJid(facts: ContactFacts[]): ContactFacts[] {
  const byJid = new Map<string, ContactFacts>();
  for (const f of facts) {
    const defined = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as ContactFacts;
    byJid.set(f.jid, { ...byJid.get(f.jid), ...defined });
  }
  return [...byJid.values()];
}

/**
 * Owner of the `contacts` table: one row per (session, jid), organization-scoped. Writes merge what the network said
 * into the stored row: a field the source did not name (undefined) keeps its stored value. A contact first known by
 * its LID alone is moved to its number once the network tells it (the row keeps its id).
 */
@Injectable()
export class ContactsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Stores what the network said of these contacts (new ones while the session holds fewer than `bound`, known ones
   * always) and answers the rows as stored after it, in no particular order.
   */
  async upsertMany(session: SessionScopeWithOrganization, facts: ContactFacts[], manager?: Tx, bound = MAX_CONTACTS_PER_SESSION): Promise<ContactRow[]> {
    return this.upsertFacts(session.organizationId, session.id, facts, manager, bound);
  }

  /** `upsertMany` on the ids themselves, shared with `replaceBlocklist` (which only the gateway calls). */
  private async upsertFacts(organizationId: string, sessionId: string, facts: ContactFacts[], manager: Tx | undefined, bound: number): Promise<ContactRow[]> {
    const given = facts.filter((f) => typeof f.jid === 'string' && f.jid.length > 0);
    if (given.length === 0) return [];
    const run = async (tx: Tx): Promise<ContactRow[]> => this.upsertIn(tx, organizationId, sessionId, mergeByJid(await this.byStoredJid(tx, sessionId, given)), bound);
    return manager ? run(manager) : this.db.transaction(run);
  }

  /** Facts that name a contact by a LID the session stores under its number are keyed by that number's jid. */
  private async byStoredJid(tx: Tx, sessionId: string, facts: ContactFacts[]): Promise<ContactFacts[]> {
    const lids = facts.map((f) => f.jid).filter((jid) => jid.endsWith('@lid'));
    if (lids.length === 0) return facts;
    const rows = await tx.query<{ jid: string; lid: string }>(
      `SELECT jid, lid FROM contacts WHERE session_id = $1 AND lid = ANY($2::text[]) AND jid <> lid`,
      [sessionId, lids],
    );
    const jidOfLid = new Map(rows.map((r) => [r.lid, r.jid]));
    return facts.map((f) => (jidOfLid.has(f.jid) ? { ...f, jid: jidOfLid.get(f.jid)!, lid: f.jid } : f));
  }

  private async upsertIn(tx: Tx, organizationId: string, sessionId: string, merged: ContactFacts[], bound: number): Promise<ContactRow[]> {
    const input = merged.map((f, ord) => ({
      ord,
      id: newId('ctc'),
      jid: f.jid,
      lid: f.lid ?? null,
      phone_number: f.phoneNumber ?? digitsOf(f.jid),
      name: storable(f.name) ?? null,
      push_name: storable(f.pushName) ?? null,
      verified_name: storable(f.verifiedName) ?? null,
      is_business: f.isBusiness ?? null,
      blocked: f.blocked ?? null,
      about: storable(f.about) ?? null,
      picture_url: f.pictureUrl ?? null,
      set_about: f.about !== undefined,
      set_picture: f.pictureUrl !== undefined,
    }));
    // a contact known by its LID alone takes its number's jid once the network names both (unless that row exists)
    await tx.query(
      `UPDATE contacts c SET jid = x.jid, updated_at = now()
       FROM jsonb_to_recordset($2::jsonb) AS x(jid text, lid text)
       WHERE c.session_id = $1 AND x.lid IS NOT NULL AND c.jid = x.lid AND x.jid <> x.lid
         AND NOT EXISTS (SELECT 1 FROM contacts o WHERE o.session_id = $1 AND o.jid = x.jid)`,
      [sessionId, JSON.stringify(input.map(({ jid, lid }) => ({ jid, lid })))],
    );
    const json = JSON.stringify(input);
    const record = `jsonb_to_recordset($2::jsonb) AS x(ord int, id text, jid text, lid text, phone_number text, name text, push_name text,
      verified_name text, is_business boolean, blocked boolean, about text, picture_url text, set_about boolean, set_picture boolean)`;
    // known contacts: only the fields the source named change
    await tx.query(
      `UPDATE contacts c SET lid = COALESCE(x.lid, c.lid), phone_number = COALESCE(x.phone_number, c.phone_number),
         name = COALESCE(x.name, c.name), push_name = COALESCE(x.push_name, c.push_name),
         verified_name = COALESCE(x.verified_name, c.verified_name),
         is_business = COALESCE(x.is_business, c.is_business), blocked = COALESCE(x.blocked, c.blocked),
         about = CASE WHEN x.set_about THEN x.about ELSE c.about END,
         picture_url = CASE WHEN x.set_picture THEN x.picture_url ELSE c.picture_url END, updated_at = now()
       FROM ${record} WHERE c.session_id = $1 AND c.jid = x.jid`,
      [sessionId, json],
    );
    // new contacts, while the session holds fewer than the bound (a concurrent insert of the same jid wins)
    await tx.query(
      `WITH fresh AS (
         SELECT x.*, row_number() OVER (ORDER BY x.ord) AS rn FROM ${record}
         WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.session_id = $1 AND c.jid = x.jid)
       ), known AS (SELECT count(*)::int AS n FROM contacts WHERE session_id = $1)
       INSERT INTO contacts (id, organization_id, session_id, jid, lid, phone_number, name, push_name, verified_name, is_business, blocked, about, picture_url)
       SELECT f.id, $3, $1, f.jid, f.lid, f.phone_number, f.name, f.push_name, f.verified_name, COALESCE(f.is_business, false), COALESCE(f.blocked, false),
              f.about, f.picture_url
       FROM fresh f, known k WHERE f.rn <= $4 - k.n
       ON CONFLICT (session_id, jid) DO NOTHING`,
      [sessionId, json, organizationId, bound],
    );
    const rows = await tx.query<Row>(`SELECT ${COLUMNS} FROM contacts WHERE session_id = $1 AND jid = ANY($2::text[])`, [
      sessionId,
      merged.map((f) => f.jid),
    ]);
    return rows.map(toRow);
  }

  /**
   * The account's blocklist as the network gave it whole: these jids are blocked (stored when new, within the bound),
   * every other stored contact of the session is not.
   */
  async replaceBlocklist(organizationId: string, sessionId: string, jids: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(`UPDATE contacts SET blocked = false, updated_at = now() WHERE session_id = $1 AND blocked AND jid <> ALL($2::text[]) AND (lid IS NULL OR lid <> ALL($2::text[]))`, [
        sessionId,
        jids,
      ]);
      await this.upsertFacts(organizationId, sessionId, jids.map((jid) => ({ jid, blocked: true })), tx, MAX_CONTACTS_PER_SESSION);
    });
  }

  /**
   * Blocks (or unblocks) these contacts inside `manager`'s transaction, answering each row after the change and whether
   * its `blocked` changed (a contact new to the session counts as changed when blocked): only a change is news.
   */
  async markBlocked(
    session: SessionScopeWithOrganization,
    contacts: Array<ContactFacts & { blocked: boolean }>,
    manager: Tx,
  ): Promise<Array<{ row: ContactRow; changed: boolean }>> {
    const jids = (await this.byStoredJid(manager, session.id, contacts)).map((c) => c.jid);
    const before = await manager.query<{ jid: string; blocked: boolean }>(
      `SELECT jid, blocked FROM contacts WHERE session_id = $1 AND jid = ANY($2::text[]) FOR UPDATE`,
      [session.id, jids],
    );
    const was = new Map(before.map((r) => [r.jid, r.blocked]));
    const rows = await this.upsertMany(session, contacts, manager);
    return rows.map((row) => ({ row, changed: (was.get(row.jid) ?? false) !== row.blocked }));
  }

  /** The session's contacts of this organization, keyset-paginated by id. */
  async page(session: OwnedSession, page: PageRequest): Promise<RowPage<ContactRow>> {
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM contacts WHERE organization_id = $1 AND session_id = $2 AND ($3::text IS NULL OR id > $3) ORDER BY id LIMIT $4`,
      [session.organizationId, session.id, page.cursor ?? null, page.limit + 1],
    );
    const more = rows.length > page.limit;
    const slice = (more ? rows.slice(0, page.limit) : rows).map(toRow);
    return { rows: slice, nextCursor: more ? slice[slice.length - 1].id : null };
  }

  /** One contact of the session, by its jid or its LID. */
  async find(session: SessionScopeWithOrganization, jid: string): Promise<ContactRow | null> {
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM contacts WHERE organization_id = $1 AND session_id = $2 AND (jid = $3 OR lid = $3) ORDER BY (jid = $3) DESC LIMIT 1`,
      [session.organizationId, session.id, jid],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }
}

/** The contact as the API shows it. */
export const toContactView = (c: ContactRow): ContactView => ({
  jid: c.jid,
  lid: c.lid,
  phoneNumber: c.phoneNumber,
  name: c.name,
  pushName: c.pushName,
  verifiedName: c.verifiedName,
  isBusiness: c.isBusiness,
  blocked: c.blocked,
});
