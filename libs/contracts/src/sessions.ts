import type { SyncHistoryMode } from './chats';

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

/** The seed's 2.1 field list, plus the settings of CONTRACT 10–13 and the two that say why (CONTRACT 4). */
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
  /** the session's outbound proxy with its credentials masked (`socks5://***@proxy.example:1080`), null: direct */
  proxyUrl: string | null;
  /** what history to store from the phone on pairing (CONTRACT 12): `none`, `recent`, `full` */
  syncHistory: SyncHistoryMode;
  /** CONTRACT 12: incoming calls are rejected (`call.incoming` still fires, with `rejected: true`) */
  rejectCalls: boolean;
  /** contacts' statuses (stories) are announced as `status.received` (CONTRACT 13); off by default */
  receiveStatus: boolean;
  /**
   * why the session is in its status: the same words as `session.status`'s reason (`qr_not_scanned`, `forbidden`,
   * `connection_lost: <cause>`, …; docs/sessions.md); null before the first status a gateway recorded
   */
  statusReason: string | null;
  /** epoch ms of the next connect attempt while a reconnect is scheduled, else null */
  nextAttemptAt: number | null;
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
  /**
   * Internal (gateway ↔ store only, never in a REST or webhook payload): the group exactly as the network addresses it,
   * what Baileys needs to send to it. Absent or null when the source did not say (the simulator, rows stored before it
   * was kept): the engine then asks the network.
   */
  network?: GroupNetwork | null;
  /** members who are admins (super admins included), in the form `participants` uses; absent when the source did not say */
  admins?: string[];
  /** members who are super admins (the creator); absent when the source did not say */
  superAdmins?: string[];
}

/** A member as the network named it in the group (Baileys' GroupParticipant: `id` is a LID in a LID-addressed group). */
export interface GroupNetworkParticipant {
  /** the id the network gave: `<digits>@lid` or `<digits>@s.whatsapp.net`, whichever the group addresses by */
  id: string;
  /** the phone-number JID, when the id is a LID and the network told the number */
  phoneNumber?: string;
  /** the LID, when the id is a phone-number JID and the network told the LID */
  lid?: string;
  admin?: 'admin' | 'superadmin' | null;
}

/** What a group send needs, as the network gave it (Baileys' `addressingMode` and `participants`). Internal. */
export interface GroupNetwork {
  /** absent when the network did not say (Baileys then addresses the group by LID) */
  addressingMode?: 'lid' | 'pn';
  participants: GroupNetworkParticipant[];
}

export const SESSION_DEFAULTS = {
  autoRead: true,
  presenceTyping: false,
  ratePerMin: 20,
  ratePerHour: 200,
  isAdminSession: false,
  syncHistory: 'none',
  rejectCalls: false,
  receiveStatus: false,
} as const;

/** A personal WhatsApp JID as accepted in group participants. */
export const USER_JID_PATTERN = /^\d{5,20}@s\.whatsapp\.net$/;
