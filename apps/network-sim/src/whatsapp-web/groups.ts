/**
 * Groups on the WhatsApp Web front door: the `w:g2` IQs a device sends (create, metadata, participants add / remove /
 * promote / demote) answered from SimNetwork's groups, and the `<notification type="w:gp2">` a member device gets when
 * a group changes. Groups are PN-addressed here (`addressing_mode="pn"`, members by phone-number jid with their `lid`
 * beside it), a form WhatsApp still uses and Baileys rc14 sends to and reads (docs/decisions.md).
 *
 * Membership and the group's properties stay SimNetwork's; only the admin flags live here (SimNetwork's group model has
 * none): the creator is `superadmin`, promote / demote set `admin`.
 */
import { DomainError, GroupChanges, GroupParticipantAction, SimAccount, SimGroup } from '@app/contracts';
import type { DeviceLink, SimNetwork } from '../sim-network';
import { children, IqError } from './stanzas';
import { BinaryNode } from './wa-kit';

const GROUP_SERVER = 'g.us';

/** Admin flags per group jid: member jid → `admin` | `superadmin` (members absent). */
export class GroupRoles {
  private readonly roles = new Map<string, Map<string, 'admin' | 'superadmin'>>();

  of(group: SimGroup): Map<string, 'admin' | 'superadmin'> {
    let roles = this.roles.get(group.groupJid);
    if (!roles) {
      roles = new Map([[group.ownerJid, 'superadmin']]);
      this.roles.set(group.groupJid, roles);
    }
    return roles;
  }
}

export interface GroupIqContext {
  network: SimNetwork;
  sessionId: string;
  link: DeviceLink;
  account: SimAccount;
  roles: GroupRoles;
}

/** `<group>` as WhatsApp describes one (what Baileys' extractGroupMetadata reads). */
export function groupNode(group: SimGroup, roles: GroupRoles, lidOf: (phoneNumber: string) => string): BinaryNode {
  const admins = roles.of(group);
  const created = String(Math.floor(group.createdAt / 1000));
  const content: BinaryNode[] = group.participants.map((jid) => {
    const type = admins.get(jid);
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

/**
 * A `w:g2` IQ: the content of its result, or an IqError. Unknown ones are 501 (Baileys logs them).
 * `create` → a new group on the network with the device's account as owner; `query` → the group (404 unknown, 403
 * not a member); `add|remove|promote|demote` → per participant (`error="403"` unless the device is an admin, `409`
 * for a member added twice or a stranger removed, `404` for a jid that is no WhatsApp user).
 */
export function answerGroupIq(iq: BinaryNode, ctx: GroupIqContext): BinaryNode[] | undefined {
  const first = children(iq)[0];
  const lidOf = (n: string) => ctx.network.lidOf(n);
  if (iq.attrs.type === 'set' && first?.tag === 'create') {
    const participants = children(first).filter((p) => p.tag === 'participant').map((p) => p.attrs.jid ?? '');
    let group: SimGroup;
    try {
      group = ctx.network.request(ctx.sessionId, ctx.link, 'createGroup', { subject: first.attrs.subject, participants });
    } catch (err) {
      if (err instanceof DomainError) throw new IqError(400, 'bad-request');
      throw err;
    }
    return [groupNode(group, ctx.roles, lidOf)];
  }
  const group = findGroup(ctx.network, iq.attrs.to);
  if (!first || !iq.attrs.to?.endsWith(`@${GROUP_SERVER}`)) throw new IqError(501, 'feature-not-implemented');
  if (!group) throw new IqError(404, 'item-not-found');
  const member = group.participants.includes(ctx.account.jid);
  if (iq.attrs.type === 'get' && first.tag === 'query') {
    if (!member) throw new IqError(403, 'forbidden');
    return [groupNode(group, ctx.roles, lidOf)];
  }
  if (iq.attrs.type === 'set' && PARTICIPANT_ACTIONS.has(first.tag)) {
    if (!member) throw new IqError(403, 'forbidden');
    return [{ tag: first.tag, attrs: {}, content: changeParticipants(ctx, group, first.tag as GroupParticipantAction, children(first).map((p) => p.attrs.jid ?? '')) }];
  }
  throw new IqError(501, 'feature-not-implemented');
}

/** Answered per participant as WhatsApp does; those that changed are applied on the network (which notifies members). */
function changeParticipants(ctx: GroupIqContext, group: SimGroup, action: GroupParticipantAction, jids: string[]): BinaryNode[] {
  const roles = ctx.roles.of(group);
  const isAdmin = roles.has(ctx.account.jid);
  const changed: string[] = [];
  const answers = jids.map((jid): BinaryNode => {
    const error = participantError(group, action, jid, isAdmin);
    if (!error) changed.push(jid);
    return { tag: 'participant', attrs: { jid, ...(error ? { error } : {}) } };
  });
  if (changed.length === 0) return answers;
  if (action === 'promote') changed.forEach((jid) => roles.set(jid, roles.get(jid) === 'superadmin' ? 'superadmin' : 'admin'));
  if (action === 'demote') changed.forEach((jid) => roles.get(jid) === 'admin' && roles.delete(jid));
  if (action === 'remove') changed.forEach((jid) => roles.delete(jid));
  ctx.network.groupParticipants(group.groupJid, { action, participants: changed });
  return answers;
}

function participantError(group: SimGroup, action: GroupParticipantAction, jid: string, isAdmin: boolean): string | undefined {
  if (!/^\d{6,15}@s\.whatsapp\.net$/.test(jid)) return '404';
  if (!isAdmin) return '403';
  const member = group.participants.includes(jid);
  if (action === 'add') return member ? '409' : undefined;
  if (!member) return '404';
  if (jid === group.ownerJid && action !== 'promote') return '406';
  return undefined;
}

/**
 * The `<notification type="w:gp2">`s for a change SimNetwork made to a group (the control API, or a member's IQ): one
 * per change, as Baileys reads one child per notification. `author` is the admin who made it.
 */
export function groupNotifications(
  newId: () => string,
  event: { type: 'group-participants'; groupJid: string; action: GroupParticipantAction; participants: string[] } | { type: 'group-update'; groupJid: string; changes: GroupChanges },
  author: string,
  lidOf: (phoneNumber: string) => string,
): BinaryNode[] {
  const changes: BinaryNode[] = [];
  if (event.type === 'group-participants') {
    const participants = event.participants.map((jid): BinaryNode => ({ tag: 'participant', attrs: { jid, lid: lidOf(jid.split('@')[0]) } }));
    changes.push({ tag: event.action, attrs: {}, content: participants });
  } else {
    const { subject, description, isAnnounce, isLocked } = event.changes;
    if (subject !== undefined) changes.push({ tag: 'subject', attrs: { subject, s_o: author, s_t: nowSeconds() } });
    if (description !== undefined) {
      const body: BinaryNode = description ? { tag: 'body', attrs: {}, content: Buffer.from(description, 'utf8') } : { tag: 'delete', attrs: {} };
      changes.push({ tag: 'description', attrs: { id: nowSeconds() }, content: [body] });
    }
    if (isAnnounce !== undefined) changes.push({ tag: isAnnounce ? 'announcement' : 'not_announcement', attrs: {} });
    if (isLocked !== undefined) changes.push({ tag: isLocked ? 'locked' : 'unlocked', attrs: {} });
  }
  return changes.map((change) => ({ tag: 'notification', attrs: { from: event.groupJid, type: 'w:gp2', id: newId(), participant: author, t: nowSeconds() }, content: [change] }));
}

export function isGroupJid(jid: string | undefined): jid is string {
  return Boolean(jid?.endsWith(`@${GROUP_SERVER}`));
}

function nowSeconds(): string {
  return String(Math.floor(Date.now() / 1000));
}
