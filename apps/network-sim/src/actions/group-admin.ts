/**
 * Group administration on the simulated network (CONTRACT 13), played as WhatsApp plays it: the groups themselves
 * (members, subject, description, settings, admin flags) are SimNetwork's `SimGroup`s; this file owns what else the
 * network knows of a group (invite codes, pictures, how often its metadata was read) and the rules:
 * - settings (`isAnnounce`, `isLocked`), participants and invite links are an admin's; subject, description and
 *   picture are any member's unless the group is locked (`isLocked`, WhatsApp's "edit group info: admins only");
 * - a refused change is `conflict` with `details.reason: 'not_admin'`; a participants change is answered per
 *   participant (`not_admin` for each when the asker may not);
 * - every change is told to every member device (before and after it), with the member who made it as `actor`.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  DomainError,
  GROUP_PARTICIPANT_ACTIONS,
  type GroupActionMap,
  type GroupChanges,
  type GroupDetails,
  type GroupParticipantAction,
  type GroupParticipantResult,
  type SessionActionHandlers,
  type SimGroup,
  SIM_MEDIA_PATH,
  USER_JID_PATTERN,
} from '@app/contracts';
import { GROUP_JID_PATTERN, parseGroupPatch, validation } from '../sim-input';
import type { SimActionScope } from './scope';

/** What the network keeps of one group besides its SimGroup. */
interface GroupExtras {
  inviteCode: string;
  picture: { mediaId: string; sha256: string } | null;
  /** how many times a device read the group's metadata (`group.metadata`): what a cache in front of it saves */
  metadataReads: number;
}

/** `GET /sim/groups/{groupJid}`: the group as the network holds it, for tests to observe. */
export type SimGroupState = SimGroup & {
  admins: string[];
  superAdmins: string[];
  inviteCode: string;
  pictureSha256: string | null;
  metadataReads: number;
};

const MAX_PICTURE_BYTES = 5 * 1024 * 1024;

function newInviteCode(): string {
  // WhatsApp's codes are 22 characters of base62-like text
  return randomBytes(16).toString('base64url').replace(/[-_]/g, 'x').slice(0, 22);
}

/** Keeps the admin lists of a SimGroup in step with a members change (the control API's and the devices'). */
export function applyParticipantChange(group: SimGroup, action: GroupParticipantAction, jids: string[]): void {
  const admins = new Set(group.admins ?? []);
  const superAdmins = new Set(group.superAdmins ?? []);
  if (action === 'add') group.participants = [...new Set([...group.participants, ...jids])];
  if (action === 'remove') {
    group.participants = group.participants.filter((p) => !jids.includes(p));
    for (const jid of jids) {
      admins.delete(jid);
      superAdmins.delete(jid);
    }
  }
  if (action === 'promote') for (const jid of jids) if (group.participants.includes(jid)) admins.add(jid);
  if (action === 'demote') for (const jid of jids) if (!superAdmins.has(jid)) admins.delete(jid);
  group.admins = [...admins];
  group.superAdmins = [...superAdmins];
}

export class SimGroupAdmin {
  private readonly extras = new Map<string, GroupExtras>();

  extrasOf(groupJid: string): GroupExtras {
    let extras = this.extras.get(groupJid);
    if (!extras) {
      extras = { inviteCode: newInviteCode(), picture: null, metadataReads: 0 };
      this.extras.set(groupJid, extras);
    }
    return extras;
  }

  /** The group whose invite code this is, or null (never issued, or revoked). */
  groupJidOfCode(code: string): string | null {
    for (const [groupJid, extras] of this.extras) if (extras.inviteCode === code) return groupJid;
    return null;
  }

  revokeInvite(groupJid: string): string {
    const extras = this.extrasOf(groupJid);
    extras.inviteCode = newInviteCode();
    return extras.inviteCode;
  }

  state(group: SimGroup): SimGroupState {
    const extras = this.extrasOf(group.groupJid);
    return {
      ...group,
      participants: [...group.participants],
      admins: [...(group.admins ?? [])],
      superAdmins: [...(group.superAdmins ?? [])],
      inviteCode: extras.inviteCode,
      pictureSha256: extras.picture?.sha256 ?? null,
      metadataReads: extras.metadataReads,
    };
  }

  details(group: SimGroup): GroupDetails {
    const admins = new Set(group.admins ?? []);
    const superAdmins = new Set(group.superAdmins ?? []);
    const picture = this.extrasOf(group.groupJid).picture;
    return {
      groupJid: group.groupJid,
      subject: group.subject,
      description: group.description,
      ownerJid: group.ownerJid,
      participants: group.participants.length,
      isAnnounce: group.isAnnounce,
      isLocked: group.isLocked,
      participantList: group.participants.map((jid) => ({ jid, isAdmin: admins.has(jid) || superAdmins.has(jid), isSuperAdmin: superAdmins.has(jid) })),
      pictureUrl: picture ? `${SIM_MEDIA_PATH}/${picture.mediaId}` : null,
    };
  }

  setPicture(groupJid: string, picture: { mediaId: string; sha256: string }): void {
    this.extrasOf(groupJid).picture = picture;
  }
}

// ---- the device's operations ----------------------------------------------------------------

function groupJidArg(args: { groupJid?: unknown }): string {
  if (typeof args.groupJid !== 'string' || !GROUP_JID_PATTERN.test(args.groupJid)) throw validation('groupJid', 'must be a group jid …@g.us');
  return args.groupJid;
}

/** The group, which the asking device's account must be a member of (WhatsApp shows a non-member nothing). */
function memberGroup(scope: SimActionScope, args: { groupJid?: unknown }): SimGroup {
  const groupJid = groupJidArg(args);
  let group: SimGroup;
  try {
    group = scope.network.group(groupJid);
  } catch {
    throw new DomainError('not_found', 'no such group on the network', { groupJid });
  }
  if (!group.participants.includes(scope.account.jid)) throw new DomainError('not_found', 'the account is not a member of this group', { groupJid });
  return group;
}

const isAdmin = (group: SimGroup, jid: string) => (group.admins ?? []).includes(jid) || (group.superAdmins ?? []).includes(jid);

function requireAdmin(scope: SimActionScope, group: SimGroup, what: string): void {
  if (!isAdmin(group, scope.account.jid)) {
    throw new DomainError('conflict', `only an admin of the group can ${what}`, { reason: 'not_admin', groupJid: group.groupJid });
  }
}

function participantStatus(scope: SimActionScope, group: SimGroup, action: GroupParticipantAction, jid: string): GroupParticipantResult['status'] {
  const member = group.participants.includes(jid);
  const superAdmin = (group.superAdmins ?? []).includes(jid);
  const asker = scope.account.jid;
  switch (action) {
    case 'add':
      if (member) return 'already';
      return scope.network.hasAccount(jid) ? 'ok' : 'not_on_whatsapp';
    case 'remove':
      if (!member) return 'not_in_group';
      // nobody but the creator itself removes the creator
      return superAdmin && jid !== asker ? 'not_admin' : 'ok';
    case 'promote':
      if (!member) return 'not_in_group';
      return isAdmin(group, jid) ? 'already' : 'ok';
    case 'demote':
      if (!member) return 'not_in_group';
      if (superAdmin) return 'not_admin';
      return isAdmin(group, jid) ? 'ok' : 'already';
  }
}

function pictureArg(args: { media?: unknown }): { data: Buffer; mimetype: string } {
  const media = args.media as { data?: unknown; mimetype?: unknown } | undefined;
  if (typeof media !== 'object' || media === null || typeof media.data !== 'string' || typeof media.mimetype !== 'string') {
    throw validation('media', 'must be {data: base64, mimetype}');
  }
  if (!/^image\/(jpeg|png|webp)$/.test(media.mimetype)) throw validation('media.mimetype', 'must be image/jpeg, image/png or image/webp');
  const data = Buffer.from(media.data, 'base64');
  if (data.length === 0 || data.length > MAX_PICTURE_BYTES) throw validation('media', `must hold 1..${MAX_PICTURE_BYTES} bytes`);
  return { data, mimetype: media.mimetype };
}

/** The handlers' scope: the device, and the area's state in SimWorld. */
type GroupAdminScope = SimActionScope<{ readonly groupAdmin: SimGroupAdmin }>;

export const SIM_GROUP_ACTIONS: Pick<SessionActionHandlers<GroupAdminScope>, keyof GroupActionMap> = {
  'group.metadata': (scope, args) => {
    const group = memberGroup(scope, args);
    scope.world.groupAdmin.extrasOf(group.groupJid).metadataReads += 1;
    return scope.world.groupAdmin.details(group);
  },

  'group.update': (scope, args) => {
    const group = memberGroup(scope, args);
    const { groupJid: _groupJid, ...patch } = args;
    const changes: GroupChanges = parseGroupPatch(patch as Record<string, unknown>);
    const settings = changes.isAnnounce !== undefined || changes.isLocked !== undefined;
    if (settings || group.isLocked) requireAdmin(scope, group, settings ? 'change its settings' : 'edit a locked group’s info');
    Object.assign(group, changes);
    scope.network.deliverToGroup(group, group.participants, { type: 'group-update', groupJid: group.groupJid, changes, actor: scope.account.jid });
    return scope.world.groupAdmin.details(group);
  },

  'group.participants': (scope, args) => {
    const group = memberGroup(scope, args);
    const action = args.action;
    if (!GROUP_PARTICIPANT_ACTIONS.includes(action)) throw validation('action', `must be one of ${GROUP_PARTICIPANT_ACTIONS.join(', ')}`);
    if (!Array.isArray(args.participants) || args.participants.length === 0 || args.participants.some((p) => typeof p !== 'string' || !USER_JID_PATTERN.test(p))) {
      throw validation('participants', 'must be 1 or more jids <digits>@s.whatsapp.net');
    }
    const jids = [...new Set(args.participants)];
    const admin = isAdmin(group, scope.account.jid);
    const data: GroupParticipantResult[] = jids.map((jid) => ({ jid, status: admin ? participantStatus(scope, group, action, jid) : 'not_admin' }));
    const changed = data.filter((r) => r.status === 'ok').map((r) => r.jid);
    if (changed.length > 0) {
      const before = group.participants;
      applyParticipantChange(group, action, changed);
      scope.network.deliverToGroup(group, [...new Set([...before, ...group.participants])], {
        type: 'group-participants',
        groupJid: group.groupJid,
        action,
        participants: changed,
        actor: scope.account.jid,
      });
    }
    return { data };
  },

  'group.leave': (scope, args) => {
    const group = memberGroup(scope, args);
    const me = scope.account.jid;
    const before = group.participants;
    applyParticipantChange(group, 'remove', [me]);
    scope.network.deliverToGroup(group, before, { type: 'group-participants', groupJid: group.groupJid, action: 'remove', participants: [me], actor: me });
    return {};
  },

  'group.invite-code': (scope, args) => {
    const group = memberGroup(scope, args);
    requireAdmin(scope, group, 'see its invite link');
    return { code: scope.world.groupAdmin.extrasOf(group.groupJid).inviteCode };
  },

  'group.invite-revoke': (scope, args) => {
    const group = memberGroup(scope, args);
    requireAdmin(scope, group, 'revoke its invite link');
    return { code: scope.world.groupAdmin.revokeInvite(group.groupJid) };
  },

  'group.join': (scope, args) => {
    if (typeof args.code !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(args.code)) throw validation('code', 'must be an invite code');
    const groupJid = scope.world.groupAdmin.groupJidOfCode(args.code);
    if (!groupJid) throw new DomainError('not_found', 'this invite code is not valid (revoked or unknown)', { code: args.code });
    const group = scope.network.group(groupJid);
    const me = scope.account.jid;
    // joining a group one is in already changes nothing and tells nobody
    if (!group.participants.includes(me)) {
      applyParticipantChange(group, 'add', [me]);
      scope.network.deliverToGroup(group, group.participants, { type: 'group-participants', groupJid, action: 'add', participants: [me], actor: me });
    }
    return scope.world.groupAdmin.details(group);
  },

  'group.picture': (scope, args) => {
    const group = memberGroup(scope, args);
    if (group.isLocked) requireAdmin(scope, group, 'change a locked group’s picture');
    const { data, mimetype } = pictureArg(args);
    const mediaId = scope.network.holdMedia(data, mimetype);
    scope.world.groupAdmin.setPicture(group.groupJid, { mediaId, sha256: createHash('sha256').update(data).digest('hex') });
    return {};
  },
};
