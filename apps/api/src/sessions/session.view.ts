import { SESSION_DEFAULTS, type GroupView, type SessionView } from '@app/contracts';
import type { Group, Session } from '@app/database';
import { epochMs } from '../common/time';

/** The seed's 2.1 fields plus the settings and the reason fields of CONTRACT 4; values not known yet are null. */
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
    statusReason: s.lastReason ?? null,
    nextAttemptAt: epochMs(s.nextAttemptAt ?? null),
  };
}

/**
 * The reason a 409 names (`details.reason` and the message): the status's reason, followed by the next attempt's time
 * while a reconnect is scheduled (`connection_lost: …; next attempt at 2026-11-25T17:40:00.000Z`), as before the view
 * had `statusReason` and `nextAttemptAt`.
 */
export function conflictReason(s: Pick<Session, 'lastReason' | 'nextAttemptAt'>): string | null {
  if (!s.lastReason) return null;
  return s.nextAttemptAt ? `${s.lastReason}; next attempt at ${s.nextAttemptAt.toISOString()}` : s.lastReason;
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
