import type { GroupMetadata } from '@whiskeysockets/baileys';
import {
  DomainError,
  type GroupActionMap,
  type GroupDetails,
  type GroupParticipantAction,
  type GroupParticipantStatus,
  type SessionActionHandlers,
} from '@app/contracts';
import { groupAdminsFrom, groupInfoFrom, preferUserJid } from '../baileys-mapping';
import type { BaileysActionContext } from './context';

/** How long a group's picture URL may take before the group is answered without it. */
const PICTURE_TIMEOUT_MS = 10_000;

/**
 * The WhatsApp status code of a refused group query: Baileys' `assertNodeErrorFree` puts it in the Boom's `data`,
 * `extractGroupMetadata` in its `output.statusCode`.
 */
export function groupErrorCode(err: unknown): number | null {
  const e = err as { data?: unknown; output?: { statusCode?: unknown } } | null;
  if (typeof e?.data === 'number') return e.data;
  return typeof e?.output?.statusCode === 'number' ? e.output.statusCode : null;
}

/** A refusal of WhatsApp in the API's words; anything else goes on as Baileys threw it. */
function refusal(err: unknown, groupJid: string | null, what: string): unknown {
  const code = groupErrorCode(err);
  const details = { ...(groupJid ? { groupJid } : {}), whatsappCode: code };
  if (code === 401 || code === 403) return new DomainError('conflict', `WhatsApp refused to ${what}: the account is not an admin of the group`, { ...details, reason: 'not_admin' });
  if (code === 404 || code === 410) return new DomainError('not_found', `WhatsApp knows no such group (or the account is not in it) to ${what}`, details);
  if (code === 406 || code === 400) return new DomainError('validation_error', `WhatsApp refused the request to ${what} as malformed`, details);
  if (code === 409) return new DomainError('conflict', `WhatsApp refused to ${what} now`, details);
  return err;
}

async function asked<T>(groupJid: string | null, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw refusal(err, groupJid, what);
  }
}

/**
 * One participant's answer of `groupParticipantsUpdate` (its `error` attribute, '200' when none) in our words. WhatsApp
 * reuses codes across actions: 403 on an add is the person's privacy setting (invite them instead), elsewhere a
 * missing right; 404 on an add is a number without an account, elsewhere a non-member; 409 is "already so".
 */
export function participantStatusOf(action: GroupParticipantAction, status: string | number | undefined): GroupParticipantStatus {
  switch (String(status ?? '200')) {
    case '200':
      return 'ok';
    case '401':
      return 'not_admin';
    case '403':
      return action === 'add' ? 'invite_required' : 'not_admin';
    case '404':
      return action === 'add' ? 'not_on_whatsapp' : 'not_in_group';
    case '406':
      return 'not_in_group';
    case '408':
      return 'recently_left';
    case '409':
      return 'already';
    case '500':
      return action === 'add' ? 'group_full' : 'error';
    default:
      return 'error';
  }
}

/** The group as the API shows it: members by number when known, with their rights. */
export function groupDetailsFrom(meta: GroupMetadata, ownJid: string | null, pictureUrl: string | null): GroupDetails {
  const info = groupInfoFrom(meta, ownJid);
  const { admins, superAdmins } = groupAdminsFrom(meta);
  return {
    groupJid: info.groupJid,
    subject: info.subject,
    description: info.description,
    ownerJid: info.ownerJid,
    participants: info.participants.length,
    isAnnounce: info.isAnnounce,
    isLocked: info.isLocked,
    participantList: (meta.participants ?? []).map((p) => {
      const jid = preferUserJid(p.id, p.phoneNumber);
      return { jid, isAdmin: admins.includes(jid), isSuperAdmin: superAdmins.includes(jid) };
    }),
    pictureUrl,
  };
}

/**
 * The group now, from the network: its metadata and its picture (none, hidden or slow: null). The network form it
 * brings is reported as a `group-metadata` event too, so the gateway's stored answer for group sends stays current.
 */
async function freshGroup(ctx: BaileysActionContext, groupJid: string): Promise<GroupDetails> {
  const meta = await asked(groupJid, 'read the group', () => ctx.sock.groupMetadata(groupJid));
  const pictureUrl = await ctx.sock.profilePictureUrl(groupJid, 'image', PICTURE_TIMEOUT_MS).then(
    (url) => url ?? null,
    () => null,
  );
  ctx.emit({ type: 'group-metadata', group: groupInfoFrom(meta, ctx.ownJid()) });
  return groupDetailsFrom(meta, ctx.ownJid(), pictureUrl);
}

/** Group administration through Baileys' own group functions (CONTRACT 13); the simulator's twin is apps/network-sim/src/actions/group-admin.ts. */
export const BAILEYS_GROUP_ACTIONS: Pick<SessionActionHandlers<BaileysActionContext>, keyof GroupActionMap> = {
  'group.metadata': (ctx, { groupJid }) => freshGroup(ctx, groupJid),

  'group.update': async (ctx, { groupJid, subject, description, isAnnounce, isLocked }) => {
    // one query per field, as WhatsApp Web changes them; the first refusal stops the rest
    const sock = ctx.sock;
    if (subject !== undefined) await asked(groupJid, 'change the subject', () => sock.groupUpdateSubject(groupJid, subject));
    if (description !== undefined) await asked(groupJid, 'change the description', () => sock.groupUpdateDescription(groupJid, description));
    if (isAnnounce !== undefined) {
      await asked(groupJid, 'change who may send', () => sock.groupSettingUpdate(groupJid, isAnnounce ? 'announcement' : 'not_announcement'));
    }
    if (isLocked !== undefined) await asked(groupJid, 'change who may edit the group', () => sock.groupSettingUpdate(groupJid, isLocked ? 'locked' : 'unlocked'));
    return freshGroup(ctx, groupJid);
  },

  'group.participants': async (ctx, { groupJid, action, participants }) => {
    let answers: { status: string; jid: string | undefined }[];
    try {
      answers = await ctx.sock.groupParticipantsUpdate(groupJid, participants, action);
    } catch (err) {
      const code = groupErrorCode(err);
      // the whole request refused for want of a right: every participant is told so, as the contract answers it
      if (code === 401 || code === 403) return { data: participants.map((jid) => ({ jid, status: 'not_admin' as const })) };
      throw refusal(err, groupJid, `${action} participants`);
    }
    return {
      data: participants.map((jid, i) => {
        // answered by jid; a LID-addressed group may answer in its own form, in the order asked
        const answer = answers.find((a) => a.jid === jid) ?? answers[i];
        return { jid, status: answer ? participantStatusOf(action, answer.status) : 'error' };
      }),
    };
  },

  'group.leave': async (ctx, { groupJid }) => {
    await asked(groupJid, 'leave the group', () => ctx.sock.groupLeave(groupJid));
    return {};
  },

  'group.invite-code': async (ctx, { groupJid }) => {
    const code = await asked(groupJid, 'read the invite link', () => ctx.sock.groupInviteCode(groupJid));
    if (!code) throw new Error('WhatsApp answered no invite code');
    return { code };
  },

  'group.invite-revoke': async (ctx, { groupJid }) => {
    const code = await asked(groupJid, 'revoke the invite link', () => ctx.sock.groupRevokeInvite(groupJid));
    if (!code) throw new Error('WhatsApp answered no new invite code');
    return { code };
  },

  'group.join': async (ctx, { code }) => {
    const groupJid = await asked(null, 'join by this invite code', () => ctx.sock.groupAcceptInvite(code));
    if (!groupJid) throw new DomainError('not_found', 'WhatsApp answered no group for this invite code', { code });
    return freshGroup(ctx, groupJid);
  },

  'group.picture': async (ctx, { groupJid, media }) => {
    await asked(groupJid, 'change the picture', () => ctx.sock.updateProfilePicture(groupJid, Buffer.from(media.data, 'base64')));
    return {};
  },
};
