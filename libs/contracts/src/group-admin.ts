import type { GroupChanges, GroupParticipantAction } from './messages';
import type { GroupView } from './sessions';

/**
 * Session actions for group administration (CONTRACT 13). Each entry is one operation the API asks of a connected session through the
 * `session.action` command (commands.ts) and each engine performs (EngineConnection.perform): see session-actions.ts.
 *
 * WhatsApp enforces admin rights and each engine answers its refusals the same way: a change of the group by a
 * member who is not an admin is a DomainError `conflict` (`details.reason: 'not_admin'`); a participants change is
 * answered per participant instead ({@link GroupParticipantStatus}), `not_admin` for each when the session may not.
 */
export interface GroupActionMap {
  /** The group as the network describes it now (members with their admin flags, picture). */
  'group.metadata': { args: { groupJid: string }; result: GroupDetails };
  /** Changes the named fields (each one a separate change on WhatsApp), then answers the group as it now is. */
  'group.update': { args: { groupJid: string } & GroupChanges; result: GroupDetails };
  'group.participants': {
    args: { groupJid: string; action: GroupParticipantAction; participants: string[] };
    result: { data: GroupParticipantResult[] };
  };
  'group.leave': { args: { groupJid: string }; result: Record<string, never> };
  /** The group's current invite code (an admin's). */
  'group.invite-code': { args: { groupJid: string }; result: { code: string } };
  /** Revokes the invite link: the old code stops working, the answer is the new one. */
  'group.invite-revoke': { args: { groupJid: string }; result: { code: string } };
  /** Joins the group an invite code points at; answers the group joined. */
  'group.join': { args: { code: string }; result: GroupDetails };
  /** Sets the group's picture (an admin's, or anyone's when the group is not locked). */
  'group.picture': { args: { groupJid: string; media: GroupPictureMedia }; result: Record<string, never> };
}

/** A member of a group and its rights (`isSuperAdmin`: the creator; a super admin is an admin too). */
export interface GroupParticipantView {
  jid: string;
  isAdmin: boolean;
  isSuperAdmin: boolean;
}

/** `GET …/groups/{groupJid}`: the Group of seed 2.2 with its members and picture. */
export interface GroupDetails extends GroupView {
  participantList: GroupParticipantView[];
  /** where the group's picture can be fetched, null when it has none (or it is hidden) */
  pictureUrl: string | null;
}

/**
 * What became of one participant of a participants change, as WhatsApp answers it per participant:
 * `ok`; `not_on_whatsapp` (no account with that number); `not_admin` (the session may not change the group);
 * `already` (added while a member, promoted while an admin, demoted while not one); `not_in_group` (removed,
 * promoted or demoted while not a member); `invite_required` (the person's privacy settings refuse being added: they
 * must be invited); `recently_left` (left too recently to be added back); `group_full`; `error` (anything else).
 */
export const GROUP_PARTICIPANT_STATUSES = [
  'ok',
  'not_on_whatsapp',
  'not_admin',
  'already',
  'not_in_group',
  'invite_required',
  'recently_left',
  'group_full',
  'error',
] as const;
export type GroupParticipantStatus = (typeof GROUP_PARTICIPANT_STATUSES)[number];

export interface GroupParticipantResult {
  jid: string;
  status: GroupParticipantStatus;
}

/** A picture on the wire of the action: its bytes (base64) and type, fetched by the API from `{url}` or `{base64}`. */
export interface GroupPictureMedia {
  data: string;
  mimetype: string;
}

/** The link WhatsApp shows for an invite code. */
export const groupInviteUrl = (code: string): string => `https://chat.whatsapp.com/${code}`;

/** A group JID as the network names groups: `<digits>-<digits>@g.us` (older) or `<digits>@g.us`. */
export const GROUP_JID_FORMAT = /^(\d+-\d+|\d{5,})@g\.us$/;
