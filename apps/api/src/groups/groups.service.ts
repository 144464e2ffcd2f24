import { Inject, Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import {
  DomainError,
  GROUP_JID_FORMAT,
  groupInviteUrl,
  type GroupDetails,
  type GroupParticipantResult,
} from '@app/contracts';
import { GroupsRepository, type OwnedSession, type StoredGroup } from '@app/database';
import { MediaFetcher, mediaTooLarge } from '../messages/media-fetcher';
import { SessionActions } from '../sessions/session-actions';
import type { GroupParticipantsDto, GroupPictureDto, JoinGroupDto, UpdateGroupDto } from './dto/group-admin.dto';

/**
 * How long a group read from the network answers `GET …/groups/{groupJid}` from the stored row. Notifications keep
 * the row current meanwhile (members, rights, subject, settings), so the bound only limits what a notification does
 * not carry (a picture changed elsewhere) and how often a burst of reads reaches WhatsApp: at most once per group and
 * session per this window per API replica, and one read at a time (concurrent reads share it). docs/groups.md.
 */
export const GROUP_READ_TTL_MS = 5_000;

const PICTURE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];

const invalid = (field: string, message: string) => new DomainError('validation_error', `${field} ${message}`, { fields: { [field]: [`${field} ${message}`] } });

function groupJidOf(value: string): string {
  if (!GROUP_JID_FORMAT.test(value)) throw invalid('groupJid', 'must be a group JID like 120363000000000000@g.us');
  return value;
}

/** Read from the network less than GROUP_READ_TTL_MS ago. */
const isFresh = (g: StoredGroup | null): g is StoredGroup => g?.refreshedAt != null && Date.now() - g.refreshedAt < GROUP_READ_TTL_MS;

/** The stored group as the API shows it. */
function detailsOf(g: StoredGroup): GroupDetails {
  const admins = new Set(g.admins);
  const superAdmins = new Set(g.superAdmins);
  return {
    groupJid: g.groupJid,
    subject: g.subject,
    description: g.description,
    ownerJid: g.ownerJid,
    participants: g.participantCount,
    isAnnounce: g.isAnnounce,
    isLocked: g.isLocked,
    participantList: g.participants.map((jid) => ({ jid, isAdmin: admins.has(jid) || superAdmins.has(jid), isSuperAdmin: superAdmins.has(jid) })),
    pictureUrl: g.pictureUrl,
  };
}

/**
 * Group administration (CONTRACT 13) for one organization's sessions: each operation asks the session's account on the
 * network (SessionActions: 404 across organizations, 409 unless `working`, 503 without a gateway) and stores what the
 * answer says of the group. The events (`group.update`, `group.participants`, with the actor) come from the network's
 * notifications, which reach every member's device, the asking one included: publishing here as well would announce
 * each change twice.
 */
@Injectable()
export class GroupsService {
  /** reads of a group from the network under way, by session and group: concurrent GETs share one */
  private readonly reading = new Map<string, Promise<GroupDetails>>();

  constructor(
    private readonly actions: SessionActions,
    private readonly groups: GroupsRepository,
    @Inject(MediaFetcher) private readonly fetcher: MediaFetcher,
    private readonly config: ApiConfig,
  ) {}

  /**
   * The group fresh from the network, bounded by GROUP_READ_TTL_MS; the stored group when the session is not
   * connected (409 when it holds none).
   */
  async get(organizationId: string, sessionId: string, groupJid: string): Promise<GroupDetails> {
    const session = await this.actions.session(organizationId, sessionId);
    const jid = groupJidOf(groupJid);
    const stored = await this.groups.storedOf(session, jid);
    if (session.status !== 'working') {
      if (stored) return detailsOf(stored);
      throw new DomainError('conflict', `the session is not connected (status ${session.status}) and holds no stored copy of this group`, {
        status: session.status,
        groupJid: jid,
      });
    }
    if (isFresh(stored)) return detailsOf(stored);
    return this.readFromNetwork(session, jid);
  }

  async update(organizationId: string, sessionId: string, groupJid: string, body: UpdateGroupDto): Promise<GroupDetails> {
    const session = await this.actions.connected(organizationId, sessionId);
    const jid = groupJidOf(groupJid);
    const changes = Object.fromEntries(
      (['subject', 'description', 'isAnnounce', 'isLocked'] as const).filter((k) => body[k] !== undefined).map((k) => [k, body[k]]),
    );
    if (Object.keys(changes).length === 0) throw invalid('subject', 'or one of description, isAnnounce, isLocked is required');
    const details = await this.perform(session, jid, () => this.actions.performOn(session, 'group.update', { groupJid: jid, ...changes }));
    await this.store(session, details);
    return details;
  }

  async participants(organizationId: string, sessionId: string, groupJid: string, body: GroupParticipantsDto): Promise<{ data: GroupParticipantResult[] }> {
    const session = await this.actions.connected(organizationId, sessionId);
    const jid = groupJidOf(groupJid);
    const participants = [...new Set(body.participants)];
    const result = await this.perform(session, jid, () =>
      this.actions.performOn(session, 'group.participants', { groupJid: jid, action: body.action, participants }),
    );
    // the network's notification does the same (idempotently); storing it now makes a read right away see it
    const changed = result.data.filter((r) => r.status === 'ok').map((r) => r.jid);
    if (changed.length > 0) {
      if (body.action === 'add') await this.groups.addParticipants(session, jid, changed);
      if (body.action === 'remove') await this.groups.removeParticipants(session, jid, changed);
      if (body.action === 'promote' || body.action === 'demote') await this.groups.setParticipantsAdmin(session, jid, changed, body.action === 'promote' ? 'admin' : null);
    }
    return result;
  }

  async leave(organizationId: string, sessionId: string, groupJid: string): Promise<void> {
    const session = await this.actions.connected(organizationId, sessionId);
    const jid = groupJidOf(groupJid);
    await this.perform(session, jid, () => this.actions.performOn(session, 'group.leave', { groupJid: jid }));
    await this.groups.forget(session, jid);
  }

  async invite(organizationId: string, sessionId: string, groupJid: string): Promise<{ code: string; url: string }> {
    const session = await this.actions.connected(organizationId, sessionId);
    const jid = groupJidOf(groupJid);
    const { code } = await this.perform(session, jid, () => this.actions.performOn(session, 'group.invite-code', { groupJid: jid }));
    return { code, url: groupInviteUrl(code) };
  }

  async revokeInvite(organizationId: string, sessionId: string, groupJid: string): Promise<{ code: string; url: string }> {
    const session = await this.actions.connected(organizationId, sessionId);
    const jid = groupJidOf(groupJid);
    const { code } = await this.perform(session, jid, () => this.actions.performOn(session, 'group.invite-revoke', { groupJid: jid }));
    return { code, url: groupInviteUrl(code) };
  }

  async join(organizationId: string, sessionId: string, body: JoinGroupDto): Promise<GroupDetails> {
    const session = await this.actions.connected(organizationId, sessionId);
    const code = body.code.replace(/^https:\/\/chat\.whatsapp\.com\//, '');
    const details = await this.actions.performOn(session, 'group.join', { code });
    await this.store(session, details);
    return details;
  }

  async setPicture(organizationId: string, sessionId: string, groupJid: string, body: GroupPictureDto): Promise<void> {
    const session = await this.actions.connected(organizationId, sessionId);
    const jid = groupJidOf(groupJid);
    const mimetype = body.media.mimetype.split(';')[0].trim().toLowerCase();
    if (!PICTURE_TYPES.includes(mimetype)) throw invalid('media.mimetype', `must be one of ${PICTURE_TYPES.join(', ')}`);
    const bytes = await this.pictureBytes(body);
    await this.perform(session, jid, () => this.actions.performOn(session, 'group.picture', { groupJid: jid, media: { data: bytes.toString('base64'), mimetype } }));
    // the picture's URL is the network's to say: the next read asks it
    await this.groups.expire(session, jid);
  }

  /**
   * One read of the group from the network at a time per session and group; what it says is stored. A caller that
   * found the row stale just before another read stored it finds it fresh here (the check runs inside the shared
   * read, registered synchronously), so a burst costs one network read however its requests interleave.
   */
  private readFromNetwork(session: OwnedSession, groupJid: string): Promise<GroupDetails> {
    const key = `${session.id} ${groupJid}`;
    let read = this.reading.get(key);
    if (!read) {
      read = (async () => {
        const stored = await this.groups.storedOf(session, groupJid);
        if (isFresh(stored)) return detailsOf(stored);
        const details = await this.perform(session, groupJid, () => this.actions.performOn(session, 'group.metadata', { groupJid }));
        await this.store(session, details);
        return details;
      })().finally(() => this.reading.delete(key));
      this.reading.set(key, read);
    }
    return read;
  }

  /** The network's answer; when it says the account is not in the group (any more), the stored copy goes. */
  private async perform<T>(session: OwnedSession, groupJid: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof DomainError && err.code === 'not_found') await this.groups.forget(session, groupJid);
      throw err;
    }
  }

  private store(session: OwnedSession, g: GroupDetails): Promise<void> {
    return this.groups.refresh(session, {
      groupJid: g.groupJid,
      subject: g.subject,
      description: g.description,
      ownerJid: g.ownerJid,
      participants: g.participantList.map((p) => p.jid),
      isAnnounce: g.isAnnounce,
      isLocked: g.isLocked,
      admins: g.participantList.filter((p) => p.isAdmin || p.isSuperAdmin).map((p) => p.jid),
      superAdmins: g.participantList.filter((p) => p.isSuperAdmin).map((p) => p.jid),
      pictureUrl: g.pictureUrl,
    });
  }

  private async pictureBytes(body: GroupPictureDto): Promise<Buffer> {
    const max = this.config.MEDIA_MAX_BYTES;
    if (body.media.url !== undefined) return this.fetcher.fetch(body.media.url);
    const b64 = body.media.base64!;
    const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
    if ((b64.length / 4) * 3 - padding > max) throw mediaTooLarge('media.base64', max);
    return Buffer.from(b64, 'base64');
  }
}
