/**
 * The groups devices created on the simulated network: members, admin flags and settings (SimGroup). Who hears of a
 * change is SimNetwork's (deliverToGroup); invite codes and pictures are SimWorld's (actions/group-admin.ts).
 */
import { DomainError, SimAccount, SimGroup, USER_JID_PATTERN } from '@app/contracts';
import { MAX_SUBJECT_LENGTH, requireText, validation } from './sim-input';

export class SimGroups {
  private readonly groups: SimGroup[] = [];
  private groupSeq = 0;

  /** A paired device creates a group: its account owns it (the only admin), with the members it names. */
  create(owner: SimAccount, sessionId: string, subject: unknown, participants: unknown): SimGroup {
    const name = requireText('subject', subject, MAX_SUBJECT_LENGTH);
    const members = participants ?? [];
    if (!Array.isArray(members)) throw validation('participants', 'must be an array of jids');
    const invalid = members.filter((p) => typeof p !== 'string' || !USER_JID_PATTERN.test(p));
    if (invalid.length > 0) {
      throw new DomainError('validation_error', 'participants must be jids of the form <digits>@s.whatsapp.net', {
        participants: invalid,
      });
    }
    this.groupSeq += 1;
    const group: SimGroup = {
      groupJid: `${owner.phoneNumber}-${Math.floor(Date.now() / 1000)}${String(this.groupSeq).padStart(4, '0')}@g.us`,
      subject: name,
      description: '',
      ownerJid: owner.jid,
      participants: [...new Set([owner.jid, ...(members as string[])])],
      isAnnounce: false,
      isLocked: false,
      admins: [owner.jid],
      superAdmins: [owner.jid],
      sessionId,
      createdAt: Date.now(),
    };
    this.groups.push(group);
    return group;
  }

  /** The group; 404, or a 422 naming `field` when the caller named it as a message's group. */
  group(groupJid: string, field?: string): SimGroup {
    const group = this.groups.find((g) => g.groupJid === groupJid);
    if (!group && field) throw validation(field, 'is only for a message sent to a group');
    if (!group) throw new DomainError('not_found', 'no group with this jid was created on the network', { groupJid });
    return group;
  }

  list(sessionId?: string): SimGroup[] {
    return sessionId ? this.groups.filter((g) => g.sessionId === sessionId) : [...this.groups];
  }
}
