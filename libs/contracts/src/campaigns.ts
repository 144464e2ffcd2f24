/**
 * Campaigns and scheduled sends (CONTRACT 17): the Campaign resource, its recipients' states, the shapes of its
 * window, pacing and warm-up, and the payloads of `campaign.progress` and `campaign.completed`.
 */
import { MEDIA_MESSAGE_TYPES } from './messages';
import type { ContactContent, LocationContent, PollContent } from './messages';

/** The send types a campaign sends: a text, every media type (bytes stored once per campaign), a location, a contact, a poll. */
export const CAMPAIGN_MESSAGE_TYPES = ['text', ...MEDIA_MESSAGE_TYPES, 'location', 'contact', 'poll'] as const;
export type CampaignMessageType = (typeof CAMPAIGN_MESSAGE_TYPES)[number];

/**
 * A media campaign's file as stored on the campaign (its bytes are stored once, beside it: `campaign_media`, read by
 * every recipient's send); `sha256` (hex) and `size` describe those bytes.
 */
export interface CampaignMedia {
  mimetype: string;
  size: number;
  filename: string | null;
  sha256: string;
}

/**
 * A campaign's message as stored: a send body whose `text` is the template (the text of a `text`, the caption of a
 * captioned media type; null for the others).
 */
export interface CampaignMessage {
  type: CampaignMessageType;
  text: string | null;
  media: CampaignMedia | null;
  location: LocationContent | null;
  contact: ContactContent | null;
  poll: PollContent | null;
}

/** A campaign's cap counters, kept on its row by the step that enqueues (libs/messaging `capState`). */
export interface CapCounters {
  dayKey: string | null;
  dayCount: number;
  /** the sending days before the current one (the warm-up's day index) */
  daysSent: number;
  hourKey: string | null;
  hourCount: number;
}

export const CAMPAIGN_STATUSES = ['scheduled', 'running', 'paused', 'completed', 'cancelled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * A recipient's state. Stored: `pending` (not enqueued yet), `queued` (its message is in the session's queue; the
 * message's own status then says `sent`, `delivered`, `read` or `failed`), `skipped` (not on WhatsApp), `optedOut`,
 * `cancelled` (the campaign was cancelled before it was sent). The view shows the message's status for an enqueued one.
 */
export const RECIPIENT_STATUSES = ['pending', 'queued', 'sent', 'delivered', 'read', 'failed', 'skipped', 'optedOut', 'cancelled'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Nothing is sent outside it: the days and the hours (`HH:mm`, `from` < `to`) in the IANA time zone. */
export interface SendWindow {
  days: Weekday[];
  from: string;
  to: string;
  timeZone: string;
}

export interface CampaignPacing {
  minDelayMs: number;
  maxDelayMs: number;
  typing: boolean;
  perHour?: number | null;
  perDay?: number | null;
}

/** The daily cap of a new number: `startPerDay` on the first sending day, growing by `growthPercent` each day after. */
export interface CampaignWarmup {
  startPerDay: number;
  growthPercent: number;
}

export interface CampaignCounts {
  total: number;
  pending: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  skipped: number;
  optedOut: number;
  replied: number;
}

export interface CampaignView {
  id: string;
  sessionId: string;
  organizationId: string;
  name: string;
  status: CampaignStatus;
  counts: CampaignCounts;
  window: SendWindow | null;
  pacing: CampaignPacing;
  warmup: CampaignWarmup | null;
  skipNotOnWhatsApp: boolean;
  /** epoch ms */
  startAt: number;
  nextSendAt: number | null;
  createdAt: number;
  completedAt: number | null;
}

export interface CampaignRecipientView {
  position: number;
  to: string;
  status: RecipientStatus;
  messageId: string | null;
  error: string | null;
  updatedAt: number;
}

export interface OptOutView {
  jid: string;
  keyword: string;
  createdAt: number;
}

/** `campaign.progress` (at most once every 10 s per campaign) and `campaign.completed`. */
export interface CampaignProgressPayload {
  campaignId: string;
  status: CampaignStatus;
  counts: CampaignCounts;
}

/** The most recipients a campaign holds. */
export const CAMPAIGN_MAX_RECIPIENTS = 10_000;
/** `sendAt` at most this far ahead. */
export const SEND_AT_MAX_AHEAD_MS = 366 * 24 * 3600 * 1000;
/** `campaign.progress` at most this often per campaign. */
export const CAMPAIGN_PROGRESS_EVERY_MS = 10_000;
