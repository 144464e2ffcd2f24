import { SESSION_DEFAULTS, type GroupView, type SessionView } from '@app/contracts';
import type { Group, Session } from '@app/database';
import { epochMs } from '../common/time';

/** Exactly the seed's 2.1 fields; values not known yet are null. */
export function toSessionView(s: Session): SessionView {
  return {
    id: s.id,
    organizationId: s.organizationId,
    createdByUserId: s.createdByUserId,
    gatewayId: s.gatewayId,
    label: s.label,
    status: s.status,
    phoneNumber: s.phoneNumber,
    waJid: s.waJid,
    waLid: s.waLid,
    isAdminSession: s.isAdminSession,
    autoRead: s.autoRead,
    presenceTyping: s.presenceTyping,
    ratePerMin: s.ratePerMin,
    ratePerHour: s.ratePerHour,
    createdAt: s.createdAt.getTime(),
    updatedAt: s.updatedAt.getTime(),
    lastConnectedAt: epochMs(s.lastConnectedAt),
    proxyUrl: s.proxyUrlShown ?? null,
    syncHistory: s.syncHistory ?? 'none',
    rejectCalls: s.rejectCalls ?? SESSION_DEFAULTS.rejectCalls,
    receiveStatus: s.receiveStatus ?? false,
  };
}

/** Exactly the seed's 2.2 fields. */
export function toGroupView(g: Group): GroupView {
  return {
    groupJid: g.groupJid,
    subject: g.subject,
    description: g.description,
    ownerJid: g.ownerJid,
    participants: g.participants,
    isAnnounce: g.isAnnounce,
    isLocked: g.isLocked,
  };
}
