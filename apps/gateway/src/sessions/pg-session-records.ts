import type { GroupChanges, GroupNetwork, GroupNetworkParticipant } from '@app/contracts';
import type { GroupsRepository, SessionsRepository } from '@app/database';
import type { SecretBox } from '@app/crypto';
import type { GroupInfo } from '../engine/engine.interface';
import type { PlacedSession, SessionRecord, SessionRecordPatch, SessionRecords } from './session-ports';

/** The runner's SessionRecords port over the sessions and groups repositories, for the sessions of one gateway. */
export class PgSessionRecords implements SessionRecords {
  constructor(
    private readonly gatewayId: string,
    private readonly sessions: SessionsRepository,
    private readonly groups: GroupsRepository,
    /** opens the sealed proxy URL; without it a session's proxy is not read */
    private readonly box?: SecretBox,
  ) {}

  async find(sessionId: string): Promise<SessionRecord | null> {
    const row = await this.sessions.findRuntime(sessionId);
    if (!row) return null;
    return { ...row, proxyUrl: row.proxyUrlSealed && this.box ? this.box.decrypt(row.proxyUrlSealed) : null };
  }

  update(sessionId: string, patch: SessionRecordPatch, leaseToken: number | null): Promise<boolean> {
    return this.sessions.patchRuntime(sessionId, patch, { leaseToken, gatewayId: this.gatewayId });
  }

  takeLeaseToken(sessionId: string): Promise<number> {
    return this.sessions.takeLeaseToken(sessionId);
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
    return this.groups.addParticipants(sessionId, groupJid, jids, network);
  }

  removeGroupParticipants(sessionId: string, groupJid: string, jids: string[], network?: GroupNetworkParticipant[]): Promise<void> {
    return this.groups.removeParticipants(sessionId, groupJid, jids, network);
  }

  setGroupAdmins(sessionId: string, groupJid: string, jids: string[], admin: 'admin' | null, network?: GroupNetworkParticipant[]): Promise<void> {
    return this.groups.setParticipantsAdmin(sessionId, groupJid, jids, admin, network);
  }

  findGroup(sessionId: string, groupJid: string): Promise<GroupInfo | null> {
    return this.groups.metadataOf(sessionId, groupJid);
  }

  resumable(gatewayId: string): Promise<PlacedSession[]> {
    return this.sessions.movableOn(gatewayId);
  }
}
