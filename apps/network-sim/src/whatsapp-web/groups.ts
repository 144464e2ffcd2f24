/**
 * Groups on the WhatsApp Web front door: the `w:g2` IQs a device sends (create, metadata, participants add / remove /
 * promote / demote, subject, description, settings, invite code get / revoke, join by code, leave) and the group
 * picture (`w:profile:picture` with a group `target`), answered as WhatsApp answers them; and the
 * `<notification type="w:gp2">` a member device gets when a group changes. Groups are PN-addressed here
 * (`addressing_mode="pn"`, members by phone-number jid with their `lid` beside it), a form WhatsApp still uses and
 * Baileys rc14 sends to and reads (docs/decisions.md).
 *
 * The door keeps no group state of its own: each IQ is played by the same operation the `sim` device protocol plays
 * (actions/group-admin.ts, through SimNetwork's `action` request), over SimNetwork's groups (members, admin flags,
 * settings) and SimWorld's group extras (invite codes, pictures). Only the wording is WhatsApp's: the operation's
 * refusals become IQ errors, its per-participant statuses WhatsApp's per-participant codes.
 */
import {
  GroupChanges,
  GroupParticipantAction,
  type GroupParticipantStatus,
  SIM_MEDIA_PATH,
  SimAccount,
  SimGroup,
  USER_JID_PATTERN,
} from '@app/contracts';
import type { DeviceLink, SimNetwork } from '../sim-network';
import { act, child, children, IqError, requestFor } from './iq';
import { BinaryNode, nowSeconds } from './wa-kit';

const GROUP_SERVER = 'g.us';

export interface GroupIqContext {
  network: SimNetwork;
  sessionId: string;
  link: DeviceLink;
  account: SimAccount;
}

/** `<group>` as WhatsApp describes one (what Baileys' extractGroupMetadata reads), admin flags from the SimGroup. */
export function groupNode(group: SimGroup, lidOf: (phoneNumber: string) => string): BinaryNode {
  const superAdmins = new Set(group.superAdmins ?? []);
  const admins = new Set(group.admins ?? []);
  const created = String(Math.floor(group.createdAt / 1000));
  const content: BinaryNode[] = group.participants.map((jid) => {
    const type = superAdmins.has(jid) ? 'superadmin' : admins.has(jid) ? 'admin' : undefined;
    return { tag: 'participant', attrs: { jid, lid: lidOf(jid.split('@')[0]), ...(type ? { type } : {}) } };
  });
  if (group.description) {
    content.push({ tag: 'description', attrs: { id: created }, content: [{ tag: 'body', attrs: {}, content: Buffer.from(group.description, 'utf8') }] });
  }
  if (group.isAnnounce) content.push({ tag: 'announcement', attrs: {} });
  if (group.isLocked) content.push({ tag: 'locked', attrs: {} });
  return {
    tag: 'group',
    attrs: {
      id: group.groupJid.split('@')[0],
      subject: group.subject,
      s_t: created,
      s_o: group.ownerJid,
      creation: created,
      creator: group.ownerJid,
      addressing_mode: 'pn',
      size: String(group.participants.length),
    },
    content,
  };
}

export function findGroup(network: SimNetwork, groupJid: string | undefined): SimGroup | undefined {
  return groupJid ? network.listGroups().find((g) => g.groupJid === groupJid) : undefined;
}

const PARTICIPANT_ACTIONS = new Set(['add', 'remove', 'promote', 'demote']);
const SETTINGS: Record<string, GroupChanges> = {
  announcement: { isAnnounce: true },
  not_announcement: { isAnnounce: false },
  locked: { isLocked: true },
  unlocked: { isLocked: false },
};

/**
 * The code WhatsApp answers a participant with, per status of the operation (Baileys surfaces it as `status`; the
 * engine maps it back: apps/gateway/src/engine/baileys/actions/group-admin.ts). None for `ok`.
 */
const PARTICIPANT_CODES: Partial<Record<GroupParticipantStatus, string>> = {
  not_admin: '401',
  already: '409',
  not_on_whatsapp: '404',
  not_in_group: '404',
};

const bareGroupJid = (id: string | undefined) => (id ? (id.includes('@') ? id : `${id}@${GROUP_SERVER}`) : '');

/**
 * A `w:g2` IQ: the content of its result, or an IqError. Unknown ones are 501 (Baileys logs them).
 * To `@g.us`: `create` (the device's account owns the new group), `leave`, `invite code=` (set: join; get: the
 * group behind the code). To a group: `query` (404 unknown or not a member), participants changes (per participant:
 * `401` for a non-admin, `409` already so, `404` no account / not a member), `subject`, `description`, the four
 * settings (`401` for a non-admin, or on a locked group's info), `invite` (get: the code, set: revoke).
 */
export function answerGroupIq(iq: BinaryNode, ctx: GroupIqContext): BinaryNode[] | undefined {
  const first = children(iq)[0];
  const lidOf = (n: string) => ctx.network.lidOf(n);
  const { type, to } = iq.attrs;
  if (!first) throw new IqError(400, 'bad-request');
  if (to === `@${GROUP_SERVER}`) return answerServerIq(type, first, ctx, lidOf);
  if (!isGroupJid(to)) throw new IqError(501, 'feature-not-implemented');
  if (!findGroup(ctx.network, to)) throw new IqError(404, 'item-not-found');
  const groupJid = to;
  if (type === 'get' && first.tag === 'query') {
    act(ctx, 'group.metadata', { groupJid });
    return [groupNode(ctx.network.group(groupJid), lidOf)];
  }
  if (type === 'get' && first.tag === 'invite') return [{ tag: 'invite', attrs: { code: act(ctx, 'group.invite-code', { groupJid }).code } }];
  if (type !== 'set') throw new IqError(501, 'feature-not-implemented');
  if (PARTICIPANT_ACTIONS.has(first.tag)) {
    const action = first.tag as GroupParticipantAction;
    return [{ tag: action, attrs: {}, content: changeParticipants(ctx, groupJid, action, children(first).map((p) => p.attrs.jid ?? '')) }];
  }
  if (first.tag === 'invite') return [{ tag: 'invite', attrs: { code: act(ctx, 'group.invite-revoke', { groupJid }).code } }];
  const changes = changesOf(first);
  if (!changes) throw new IqError(501, 'feature-not-implemented');
  act(ctx, 'group.update', { groupJid, ...changes });
  return undefined;
}

/** The IQs to `@g.us` itself: create, leave, join by code, read the group behind a code. */
function answerServerIq(type: string | undefined, first: BinaryNode, ctx: GroupIqContext, lidOf: (n: string) => string): BinaryNode[] {
  if (type === 'set' && first.tag === 'create') {
    const participants = children(first).filter((p) => p.tag === 'participant').map((p) => p.attrs.jid ?? '');
    return [groupNode(requestFor(ctx, 'createGroup', { subject: first.attrs.subject, participants }), lidOf)];
  }
  if (type === 'set' && first.tag === 'leave') {
    const left = children(first)
      .filter((g) => g.tag === 'group')
      .map((g) => {
        const groupJid = bareGroupJid(g.attrs.id);
        act(ctx, 'group.leave', { groupJid });
        return { tag: 'group', attrs: { id: groupJid } };
      });
    return [{ tag: 'leave', attrs: {}, content: left }];
  }
  if (first.tag === 'invite' && first.attrs.code) {
    const code = first.attrs.code;
    if (type === 'set') return [{ tag: 'group', attrs: { jid: act(ctx, 'group.join', { code }).groupJid } }];
    const groupJid = ctx.network.world.groupAdmin.groupJidOfCode(code);
    if (!groupJid) throw new IqError(404, 'item-not-found');
    return [groupNode(ctx.network.group(groupJid), lidOf)];
  }
  throw new IqError(501, 'feature-not-implemented');
}

/** What a `subject`, `description` or settings IQ changes (null: not one of them). */
function changesOf(node: BinaryNode): GroupChanges | null {
  if (node.tag === 'subject') return { subject: textOf(node) };
  if (node.tag === 'description') return { description: node.attrs.delete === 'true' ? '' : textOf(child(node, 'body')) };
  return SETTINGS[node.tag] ?? null;
}

function textOf(node: BinaryNode | undefined): string {
  const content = node?.content;
  if (content instanceof Uint8Array) return Buffer.from(content).toString('utf8');
  if (typeof content === 'string') return content;
  throw new IqError(400, 'bad-request');
}

/**
 * Answered per participant as WhatsApp does (the operation decides; a jid that is no user's is 404 without asking it).
 * The network applies those that succeed and notifies the members.
 */
function changeParticipants(ctx: GroupIqContext, groupJid: string, action: GroupParticipantAction, jids: string[]): BinaryNode[] {
  const users = [...new Set(jids.filter((jid) => USER_JID_PATTERN.test(jid)))];
  const statuses = new Map<string, GroupParticipantStatus>(users.length ? act(ctx, 'group.participants', { groupJid, action, participants: users }).data.map((r) => [r.jid, r.status]) : []);
  return jids.map((jid): BinaryNode => {
    const status = statuses.get(jid) ?? 'not_in_group';
    const error = status === 'ok' ? undefined : (PARTICIPANT_CODES[status] ?? '500');
    return { tag: 'participant', attrs: { jid, ...(error ? { error } : {}) } };
  });
}

/**
 * A group's picture (`w:profile:picture` with `target=<group>`): `set` stores the JPEG Baileys made (the operation's
 * rights: anyone's unless the group is locked), `get` answers where it is served (404 when it has none).
 */
export function answerGroupPictureIq(iq: BinaryNode, ctx: GroupIqContext): BinaryNode[] {
  const groupJid = iq.attrs.target ?? '';
  const picture = child(iq, 'picture');
  if (iq.attrs.type === 'set') {
    const bytes = picture?.content;
    if (!(bytes instanceof Uint8Array)) throw new IqError(400, 'bad-request');
    act(ctx, 'group.picture', { groupJid, media: { data: Buffer.from(bytes).toString('base64'), mimetype: 'image/jpeg' } });
    const stored = ctx.network.world.groupAdmin.extrasOf(groupJid).picture;
    return [{ tag: 'picture', attrs: { id: stored?.mediaId ?? '' } }];
  }
  if (!findGroup(ctx.network, groupJid)) throw new IqError(404, 'item-not-found');
  const stored = ctx.network.world.groupAdmin.extrasOf(groupJid).picture;
  if (!stored) throw new IqError(404, 'item-not-found');
  return [{ tag: 'picture', attrs: { id: stored.mediaId, type: picture?.attrs.type ?? 'image', url: `${SIM_MEDIA_PATH}/${stored.mediaId}` } }];
}

/**
 * The `<notification type="w:gp2">`s for a change SimNetwork made to a group (the control API, or a member's IQ): one
 * per change, as Baileys reads one child per notification. `author` is the member who made it (`participant`, and
 * the subject's `s_o`); null for the control API's admin, whom the test does not name: no `participant`, so Baileys
 * names no author (the sim door's `actor: null`).
 */
export function groupNotifications(
  newId: () => string,
  event: { type: 'group-participants'; groupJid: string; action: GroupParticipantAction; participants: string[] } | { type: 'group-update'; groupJid: string; changes: GroupChanges },
  author: string | null,
  lidOf: (phoneNumber: string) => string,
): BinaryNode[] {
  const changes: BinaryNode[] = [];
  if (event.type === 'group-participants') {
    const participants = event.participants.map((jid): BinaryNode => ({ tag: 'participant', attrs: { jid, lid: lidOf(jid.split('@')[0]) } }));
    changes.push({ tag: event.action, attrs: {}, content: participants });
  } else {
    const { subject, description, isAnnounce, isLocked } = event.changes;
    if (subject !== undefined) changes.push({ tag: 'subject', attrs: { subject, ...(author ? { s_o: author } : {}), s_t: nowSeconds() } });
    if (description !== undefined) {
      const body: BinaryNode = description ? { tag: 'body', attrs: {}, content: Buffer.from(description, 'utf8') } : { tag: 'delete', attrs: {} };
      changes.push({ tag: 'description', attrs: { id: nowSeconds() }, content: [body] });
    }
    if (isAnnounce !== undefined) changes.push({ tag: isAnnounce ? 'announcement' : 'not_announcement', attrs: {} });
    if (isLocked !== undefined) changes.push({ tag: isLocked ? 'locked' : 'unlocked', attrs: {} });
  }
  const by: Record<string, string> = author ? { participant: author } : {};
  return changes.map((change) => ({ tag: 'notification', attrs: { from: event.groupJid, type: 'w:gp2', id: newId(), ...by, t: nowSeconds() }, content: [change] }));
}

export function isGroupJid(jid: string | undefined): jid is string {
  return Boolean(jid?.endsWith(`@${GROUP_SERVER}`));
}
