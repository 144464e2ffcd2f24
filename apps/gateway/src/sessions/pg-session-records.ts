import type { GroupChanges, GroupNetwork, GroupNetworkParticipant } from '@app/contracts';
import { serviceSession, type GroupsRepository, type RuntimeFence, type SessionRuntimePatch, type SessionRuntimeRow, type SessionsRepository } from '@app/database';
import type { SecretBox } from '@app/crypto';
import { GroupCommit, TURN_GROUPS } from '@app/infra';
import type { GroupInfo } from '../engine/engine.interface';
import type { PlacedSession, SessionRecord, SessionRecordPatch, SessionRecords } from '../store-ports';

interface RowWrite {
  id: string;
  patch: SessionRuntimePatch;
  fence: RuntimeFence;
}

/** The columns a patch writes: writes naming the same ones share a statement. */
const shapeOf = (patch: SessionRuntimePatch): string =>
  (Object.keys(patch) as Array<keyof SessionRuntimePatch>).filter((k) => patch[k] !== undefined).sort().join(',');

/**
 * The runner's SessionRecords port over the sessions and groups repositories, for the sessions of one gateway. The
 * reads, status writes and lease tokens of a session's start are grouped across its runners (GroupCommit): a failover
 * that adopts hundreds of sessions at once costs one statement per turn for each, not one per session.
 */
export class PgSessionRecords implements SessionRecords {
  private readonly reads: GroupCommit<string, SessionRuntimeRow | null>;
  private readonly writes: GroupCommit<RowWrite, boolean>;
  private readonly tokens: GroupCommit<string, number | null>;

  constructor(
    private readonly gatewayId: string,
    private readonly sessions: SessionsRepository,
    private readonly groups: GroupsRepository,
    /** opens the sealed proxy URL; without it a session's proxy is not read */
    private readonly box?: SecretBox,
  ) {
    const self = (id: string) => id;
    this.reads = new GroupCommit(async (ids) => {
      const rows = await sessions.findRuntimeMany(ids);
      return ids.map((id) => rows.get(id) ?? null);
    }, { ...TURN_GROUPS, keyOf: self });
    this.writes = new GroupCommit((writes) => this.writeRows(writes), { ...TURN_GROUPS, keyOf: (w) => w.id });
    this.tokens = new GroupCommit(async (ids) => {
      const taken = await sessions.takeLeaseTokens(ids);
      return ids.map((id) => taken.get(id) ?? null);
    }, { ...TURN_GROUPS, keyOf: self });
  }

  async find(sessionId: string): Promise<SessionRecord | null> {
    const row = await this.reads.submit(sessionId);
    if (!row) return null;
    return { ...row, proxyUrl: row.proxyUrlSealed && this.box ? this.box.decrypt(row.proxyUrlSealed) : null };
  }

  update(sessionId: string, patch: SessionRecordPatch, leaseToken: number | null): Promise<boolean> {
    return this.writes.submit({ id: sessionId, patch, fence: { leaseToken, gatewayId: this.gatewayId } });
  }

  async takeLeaseToken(sessionId: string): Promise<number> {
    const token = await this.tokens.submit(sessionId);
    if (token === null) throw new Error(`session ${sessionId} not found`);
    return token;
  }

  /** One statement per shape of patch among the writes of a turn. */
  private async writeRows(writes: RowWrite[]): Promise<boolean[]> {
    const byShape = new Map<string, RowWrite[]>();
    for (const w of writes) {
      const shape = shapeOf(w.patch);
      const group = byShape.get(shape);
      if (group) group.push(w);
      else byShape.set(shape, [w]);
    }
    const written = await Promise.all([...byShape.values()].map((group) => this.sessions.patchRuntimeMany(group)));
    return writes.map((w) => written.some((ids) => ids.has(w.id)));
  }

  notPlacedOn(sessionIds: string[], gatewayId: string): Promise<string[]> {
    return this.sessions.notPlacedOn(sessionIds, gatewayId);
  }

  saveGroup(organizationId: string, sessionId: string, g: GroupInfo): Promise<void> {
    return this.groups.upsert(organizationId, sessionId, g);
  }

  updateGroup(sessionId: string, groupJid: string, changes: GroupChanges, network?: GroupNetwork): Promise<void> {
    return this.groups.applyChanges(sessionId, groupJid, changes, network);
  }

  addGroupParticipants(sessionId: string, groupJid: string, jids: string[], network?: GroupNetworkParticipant[]): Promise<void> {
    return this.groups.addParticipants(serviceSession(sessionId), groupJid, jids, network);
  }

  removeGroupParticipants(sessionId: string, groupJid: string, jids: string[], network?: GroupNetworkParticipant[]): Promise<void> {
    return this.groups.removeParticipants(serviceSession(sessionId), groupJid, jids, network);
  }

  setGroupAdmins(sessionId: string, groupJid: string, jids: string[], admin: 'admin' | null, network?: GroupNetworkParticipant[]): Promise<void> {
    return this.groups.setParticipantsAdmin(serviceSession(sessionId), groupJid, jids, admin, network);
  }

  findGroup(sessionId: string, groupJid: string): Promise<GroupInfo | null> {
    return this.groups.metadataOf(sessionId, groupJid);
  }

  resumable(gatewayId: string): Promise<PlacedSession[]> {
    return this.sessions.movableOn(gatewayId);
  }
}
