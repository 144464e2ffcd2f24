import type { DataSource } from 'typeorm';
import { newId, type RuntimeFence, Session, type SessionRuntimePatch, SessionsRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

describe('SessionsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let sessions: SessionsRepository;
  let orgId: string;
  let otherOrgId: string;

  beforeAll(async () => {
    db = await testDataSource();
    sessions = new SessionsRepository(await testDb());
    orgId = await newOrganization(db);
    otherOrgId = await newOrganization(db, 'Other');
  });
  afterAll(() => closeTestDataSource());

  it('scopes lookups and deletes by organization', async () => {
    const s = await newSession(db, orgId);
    expect((await sessions.findInOrganization(orgId, s.id))?.label).toBe('spec');
    expect(await sessions.findInOrganization(otherOrgId, s.id)).toBeNull();
    expect(await sessions.existsInOrganization(orgId, s.id)).toBe(true);
    expect(await sessions.existsInOrganization(otherOrgId, s.id)).toBe(false);

    await sessions.deleteOwned(s);
    expect(await sessions.existsInOrganization(orgId, s.id)).toBe(false);
  });

  it('findInOrganization reads the same Session as the entity repository, every field', async () => {
    const s = await newSession(db, orgId, {
      gatewayId: 'gw-1', phoneNumber: '15550001111', waJid: '15550001111@s.whatsapp.net', waLid: '123@lid', isAdminSession: true,
      autoRead: false, presenceTyping: true, ratePerMin: 7, ratePerHour: 70, lastConnectedAt: new Date(1_700_000_000_123), lastReason: 'connected',
    });
    const raw = await sessions.findInOrganization(orgId, s.id);
    const viaEntity = await db.getRepository(Session).findOne({ where: { id: s.id, organizationId: orgId } });
    expect(raw).toBeInstanceOf(Session);
    expect(raw).toEqual(viaEntity);
    expect(Object.keys(raw!).sort()).toEqual(Object.keys(viaEntity!).sort());
    expect(raw).toMatchObject({ ratePerMin: 7, presenceTyping: true, lastConnectedAt: new Date(1_700_000_000_123), lastReason: 'connected' });
  });

  it('pages an organization’s sessions by id, the cursor continuing where the last page ended', async () => {
    const org = await newOrganization(db);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await newSession(db, org)).id);
    ids.sort();
    await newSession(db, otherOrgId);

    const first = await sessions.page(org, { limit: 2 });
    expect(first.rows.map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.nextCursor).toBe(ids[1]);
    const second = await sessions.page(org, { limit: 2, cursor: first.nextCursor! });
    expect(second.rows.map((s) => s.id)).toEqual(ids.slice(2));
    expect(second.nextCursor).toBeNull();
  });

  it('patches only the settings given, and marks a session stopped on request', async () => {
    const s = await newSession(db, orgId, { label: 'before', ratePerMin: 5 });
    await sessions.patchSettings(s, { label: 'after' });
    const patched = (await sessions.findInOrganization(orgId, s.id))!;
    expect(patched).toMatchObject({ label: 'after', ratePerMin: 5 });
    expect(patched.updatedAt.getTime()).toBeGreaterThanOrEqual(s.updatedAt.getTime());

    await sessions.markStopped(s);
    expect(await sessions.findInOrganization(orgId, s.id)).toMatchObject({ status: 'stopped', desiredState: 'stopped' });
  });

  it('moves a session to another gateway only from where the caller saw it', async () => {
    const s = await newSession(db, orgId, { gatewayId: 'gw-old' });
    await sessions.moveToGateway(s.id, 'gw-elsewhere', 'gw-lost');
    expect((await sessions.findInOrganization(orgId, s.id))!.gatewayId).toBe('gw-old');
    await sessions.moveToGateway(s.id, 'gw-old', 'gw-new');
    expect((await sessions.findInOrganization(orgId, s.id))!.gatewayId).toBe('gw-new');

    const unplaced = await newSession(db, orgId, { gatewayId: null });
    await sessions.moveToGateway(unplaced.id, null, 'gw-new');
    expect((await sessions.findInOrganization(orgId, unplaced.id))!.gatewayId).toBe('gw-new');
  });

  it('moves many sessions in one statement, each to its own gateway and only those still where the caller saw them', async () => {
    const a = await newSession(db, orgId, { gatewayId: 'gw-dead' });
    const b = await newSession(db, orgId, { gatewayId: 'gw-dead' });
    const taken = await newSession(db, orgId, { gatewayId: 'gw-other-mover' });
    const moved = await sessions.moveManyToGateway('gw-dead', [
      { id: a.id, to: 'gw-1' },
      { id: b.id, to: 'gw-2' },
      { id: taken.id, to: 'gw-1' },
      { id: 'ses_gone', to: 'gw-2' },
    ]);
    expect(moved.sort()).toEqual([a.id, b.id].sort());
    expect((await sessions.findInOrganization(orgId, a.id))!.gatewayId).toBe('gw-1');
    expect((await sessions.findInOrganization(orgId, b.id))!.gatewayId).toBe('gw-2');
    expect((await sessions.findInOrganization(orgId, taken.id))!.gatewayId).toBe('gw-other-mover');
    expect(await sessions.moveManyToGateway('gw-dead', [])).toEqual([]);
  });

  it('counts the sessions that should run on each of the given gateways', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((x) => `gw-count-${x}-${orgId}`);
    await newSession(db, orgId, { gatewayId: a });
    await newSession(db, orgId, { gatewayId: a, status: 'working' });
    await newSession(db, orgId, { gatewayId: a, desiredState: 'stopped' });
    await newSession(db, orgId, { gatewayId: b });
    await newSession(db, orgId, { gatewayId: c });

    const counts = await sessions.placedCountsOn([a, b, `gw-empty-${orgId}`]);
    expect([...counts.entries()].sort()).toEqual([[a, 2], [b, 1]]);
  });

  it('resumable sessions exclude stopped, failed and logged-out ones, those wanted stopped and other gateways’', async () => {
    const gw = `gw-resume-${orgId}`;
    const working = await newSession(db, orgId, { gatewayId: gw, status: 'working' });
    const qr = await newSession(db, orgId, { gatewayId: gw, status: 'scan_qr_code' });
    for (const status of ['stopped', 'failed', 'logged_out'] as const) await newSession(db, orgId, { gatewayId: gw, status });
    await newSession(db, orgId, { gatewayId: gw, status: 'working', desiredState: 'stopped' });
    await newSession(db, orgId, { gatewayId: `${gw}-other`, status: 'working' });

    expect((await sessions.movableOn(gw)).map((s) => s.id)).toEqual([working.id, qr.id].sort());
  });

  /** One runner's fenced write (the repository's grouped write, for one session): true when it was not refused. */
  const patchRuntime = async (id: string, patch: SessionRuntimePatch, fence: RuntimeFence) => (await sessions.patchRuntimeMany([{ id, patch, fence }])).has(id);

  it('reads and patches the columns a gateway runner owns, leaving the rest alone', async () => {
    const s = await newSession(db, orgId, { label: 'runner', phoneNumber: '4917000' });
    expect(await sessions.findRuntime(s.id)).toEqual({ id: s.id, organizationId: orgId, status: 'stopped', desiredState: 'running', phoneNumber: '4917000', autoRead: true, presenceTyping: false, rejectCalls: false, receiveStatus: false, syncHistory: 'none', ratePerMin: 20, proxyUrlSealed: null });
    expect(await sessions.findRuntime(newId('ses'))).toBeNull();

    const connectedAt = new Date('2026-01-02T03:04:05Z');
    const fence = { leaseToken: await sessions.takeLeaseToken(s.id), gatewayId: 'gw-runner' };
    expect(await patchRuntime(s.id, { status: 'working', waJid: '4917000@s.whatsapp.net', lastConnectedAt: connectedAt, phoneNumber: undefined }, fence)).toBe(true);
    const row = (await sessions.findInOrganization(orgId, s.id))!;
    expect(row).toMatchObject({ status: 'working', waJid: '4917000@s.whatsapp.net', lastConnectedAt: connectedAt, phoneNumber: '4917000', label: 'runner' });

    await patchRuntime(s.id, {}, fence);
    expect((await sessions.findRuntime(s.id))!.status).toBe('working');
  });

  it('refuses the writes of a holder whose lease token another holder has since replaced', async () => {
    const s = await newSession(db, orgId, { gatewayId: 'gw-a', status: 'working' });
    const stale = { leaseToken: await sessions.takeLeaseToken(s.id), gatewayId: 'gw-a' };
    const current = { leaseToken: await sessions.takeLeaseToken(s.id), gatewayId: 'gw-b' };
    expect(current.leaseToken).toBe(stale.leaseToken + 1);

    expect(await patchRuntime(s.id, { status: 'failed' }, stale)).toBe(false);
    expect((await sessions.findRuntime(s.id))!.status).toBe('working');
    expect(await patchRuntime(s.id, { status: 'reconnecting' }, current)).toBe(true);
    expect((await sessions.findRuntime(s.id))!.status).toBe('reconnecting');
  });

  it('lets a runner without a lease write only while the row still places the session on its gateway', async () => {
    const s = await newSession(db, orgId, { gatewayId: 'gw-a', status: 'stopped' });
    expect(await patchRuntime(s.id, { status: 'starting' }, { leaseToken: null, gatewayId: 'gw-a' })).toBe(true);
    expect(await sessions.moveToGateway(s.id, 'gw-a', 'gw-b')).toBe(true);
    expect(await patchRuntime(s.id, { status: 'reconnecting' }, { leaseToken: null, gatewayId: 'gw-a' })).toBe(false);
    expect((await sessions.findRuntime(s.id))!.status).toBe('starting');
    expect(await sessions.notPlacedOn([s.id, 'ses_gone'], 'gw-a')).toEqual([s.id, 'ses_gone']);
    expect(await sessions.notPlacedOn([s.id], 'gw-b')).toEqual([]);
  });
  it('reads, takes tokens for and patches many sessions in one statement each, every row under its own fence', async () => {
    const a = await newSession(db, orgId, { gatewayId: 'gw-a', status: 'stopped', phoneNumber: '4917001' });
    const b = await newSession(db, orgId, { gatewayId: 'gw-a', status: 'stopped' });
    const c = await newSession(db, orgId, { gatewayId: 'gw-b', status: 'working' });
    const gone = newId('ses');

    const rows = await sessions.findRuntimeMany([a.id, b.id, gone]);
    expect([...rows.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(rows.get(a.id)).toEqual(await sessions.findRuntime(a.id));

    const before = await sessions.takeLeaseToken(c.id);
    const tokens = await sessions.takeLeaseTokens([a.id, c.id, gone]);
    expect(tokens.get(c.id)).toBe(before + 1);
    expect(tokens.get(a.id)).toBe(1);
    expect(tokens.has(gone)).toBe(false);

    const connectedAt = new Date('2026-01-02T03:04:05Z');
    const patch = { status: 'working' as const, lastReason: 'connected', lastConnectedAt: connectedAt, phoneNumber: null };
    const written = await sessions.patchRuntimeMany([
      // the current token: written
      { id: a.id, patch, fence: { leaseToken: tokens.get(a.id)!, gatewayId: 'gw-a' } },
      // no token, placed on the writer's gateway: written
      { id: b.id, patch, fence: { leaseToken: null, gatewayId: 'gw-a' } },
      // a stale token: refused, the row untouched
      { id: c.id, patch, fence: { leaseToken: before, gatewayId: 'gw-b' } },
      { id: gone, patch, fence: { leaseToken: null, gatewayId: 'gw-a' } },
    ]);
    expect([...written].sort()).toEqual([a.id, b.id].sort());
    expect(await sessions.findInOrganization(orgId, a.id)).toMatchObject({ status: 'working', lastReason: 'connected', lastConnectedAt: connectedAt, phoneNumber: null, label: 'spec' });
    expect((await sessions.findRuntime(b.id))!.status).toBe('working');
    expect((await sessions.findRuntime(c.id))!.status).toBe('working');
    expect((await sessions.findInOrganization(orgId, c.id))!.lastReason).not.toBe('connected');

    // the next attempt's time is a timestamp column like lastConnectedAt; null clears it
    const nextAttemptAt = new Date('2026-01-02T03:05:00.250Z');
    const reconnecting = { status: 'reconnecting' as const, lastReason: 'connection_lost: lost', nextAttemptAt };
    expect(await sessions.patchRuntimeMany([{ id: a.id, patch: reconnecting, fence: { leaseToken: tokens.get(a.id)!, gatewayId: 'gw-a' } }])).toEqual(new Set([a.id]));
    expect(await sessions.findInOrganization(orgId, a.id)).toMatchObject(reconnecting);
    const back = { status: 'working' as const, lastReason: 'connected', nextAttemptAt: null };
    await sessions.patchRuntimeMany([{ id: a.id, patch: back, fence: { leaseToken: tokens.get(a.id)!, gatewayId: 'gw-a' } }]);
    expect(await sessions.findInOrganization(orgId, a.id)).toMatchObject(back);

    // without a token, a row placed elsewhere is refused
    expect(await sessions.patchRuntimeMany([{ id: c.id, patch: { status: 'starting' }, fence: { leaseToken: null, gatewayId: 'gw-a' } }])).toEqual(new Set());
    expect((await sessions.findRuntime(c.id))!.status).toBe('working');
  });
});
