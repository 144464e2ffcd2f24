export const SESSION_STATUSES = [
  'stopped',
  'starting',
  'scan_qr_code',
  'working',
  'reconnecting',
  'failed',
  'logged_out',
] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Exactly the seed's 2.1 field list. */
export interface SessionView {
  id: string;
  organizationId: string;
  createdByUserId: string | null;
  gatewayId: string | null;
  label: string;
  status: SessionStatus;
  phoneNumber: string | null;
  waJid: string | null;
  waLid: string | null;
  isAdminSession: boolean;
  autoRead: boolean;
  presenceTyping: boolean;
  ratePerMin: number;
  ratePerHour: number;
  createdAt: number;
  updatedAt: number;
  lastConnectedAt: number | null;
}

/** Exactly the seed's 2.2 field list. */
export interface GroupView {
  groupJid: string;
  subject: string;
  description: string;
  ownerJid: string;
  participants: number;
  isAnnounce: boolean;
  isLocked: boolean;
}

/** A group as the network describes it (members listed); the API's GroupView counts them. */
export interface GroupInfo {
  groupJid: string;
  subject: string;
  description: string;
  ownerJid: string;
  /** member jids; the creator is a member, as WhatsApp lists it */
  participants: string[];
  isAnnounce: boolean;
  isLocked: boolean;
}

export const SESSION_DEFAULTS = {
  autoRead: true,
  presenceTyping: false,
  ratePerMin: 20,
  ratePerHour: 200,
  isAdminSession: false,
} as const;

/** A personal WhatsApp JID as accepted in group participants. */
export const USER_JID_PATTERN = /^\d{5,20}@s\.whatsapp\.net$/;
