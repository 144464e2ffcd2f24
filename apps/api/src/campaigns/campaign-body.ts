import { parse } from 'csv-parse/sync';
import {
  CAMPAIGN_MAX_RECIPIENTS,
  CAMPAIGN_MESSAGE_TYPES,
  CampaignMessage,
  CampaignMessageType,
  CampaignPacing,
  CampaignWarmup,
  CHAT_JID_PATTERN,
  DomainError,
  isCaptionedMediaType,
  isMediaType,
  normalizeChatJid,
  SEND_AT_MAX_AHEAD_MS,
  SendWindow,
  WEEKDAYS,
} from '@app/contracts';
import { missingVariable, windowProblems } from '@app/messaging';
import { CAPTION_MAX, FILENAME, httpUrlProblem, isPaddedBase64, MIMETYPE } from '../messages/dto/send-message.dto';

/**
 * A campaign's body (CONTRACT 17) checked whole before anything is stored: every problem is a 422 naming its field;
 * a recipient whose variables do not cover the template is a 422 naming the recipient (its position and number) and
 * the variable. Pure: the unit spec drives it.
 */
export interface CampaignBody {
  name: string;
  /** `media` is null here: the file is described once its bytes are in hand (`CampaignMediaLoader`) */
  message: CampaignMessage;
  /** where a media campaign's file comes from: exactly one of `url` and `base64` */
  media: CampaignMediaInput | null;
  recipients: Array<{ to: string; variables: Record<string, string> | null }>;
  startAt: number;
  window: SendWindow | null;
  pacing: CampaignPacing;
  warmup: CampaignWarmup | null;
  skipNotOnWhatsApp: boolean;
}

/** A media campaign's file as given: a URL to fetch (through the SSRF guard) or the bytes in base64. */
export interface CampaignMediaInput {
  url: string | null;
  base64: string | null;
  mimetype: string | null;
  filename: string | null;
}

export interface CampaignBodyLimits {
  /** MEDIA_MAX_BYTES: a base64 file larger than this is refused here, a URL's answer by the fetcher */
  mediaMaxBytes: number;
}

/** Pacing when none is given: 20–60 s between messages with "typing…" (docs/campaigns.md, "Advice"). */
export const DEFAULT_PACING: CampaignPacing = { minDelayMs: 20_000, maxDelayMs: 60_000, typing: true, perHour: null, perDay: null };
const TEXT_MAX = 4096;
const KNOWN = ['name', 'message', 'recipients', 'recipientsCsv', 'startAt', 'window', 'pacing', 'warmup', 'skipNotOnWhatsApp'];

const invalid = (fields: Record<string, string[]>) => new DomainError('validation_error', 'request is invalid', { fields });
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

export function parseCampaignBody(raw: unknown, now: number, limits: CampaignBodyLimits): CampaignBody {
  if (!isObject(raw)) throw invalid({ body: ['must be a JSON object'] });
  // a Map: a field is named by the body's own keys, and `valueOf` or `__proto__` must be a field like any other
  const fields = new Map<string, string[]>();
  const problem = (field: string, text: string) => fields.set(field, [...(fields.get(field) ?? []), text]);
  for (const key of Object.keys(raw)) if (!KNOWN.includes(key)) problem(key, 'property should not exist');

  if (typeof raw.name !== 'string' || raw.name.trim().length < 1 || raw.name.length > 200) problem('name', 'name must be 1..200 characters');
  const { message, media } = messageOf(raw.message, problem, limits);
  const startAt = raw.startAt === undefined ? now : raw.startAt;
  if (!isInt(startAt, 0) || startAt > now + SEND_AT_MAX_AHEAD_MS) problem('startAt', 'startAt must be epoch ms, at most 366 days ahead');
  const window = raw.window === undefined || raw.window === null ? null : windowOf(raw.window, problem);
  const pacing = raw.pacing === undefined ? DEFAULT_PACING : pacingOf(raw.pacing, problem);
  const warmup = raw.warmup === undefined || raw.warmup === null ? null : warmupOf(raw.warmup, problem);
  if (raw.skipNotOnWhatsApp !== undefined && typeof raw.skipNotOnWhatsApp !== 'boolean') problem('skipNotOnWhatsApp', 'must be a boolean');
  const recipients = recipientsOf(raw, problem);
  if (fields.size > 0) throw invalid(Object.fromEntries(fields));

  // every recipient covers the template, checked at creation: never a failure halfway through
  if (message.text !== null) {
    for (const [i, r] of recipients.entries()) {
      const missing = missingVariable(message.text, r.variables ?? {});
      if (missing !== null) {
        throw new DomainError('validation_error', `recipient ${i} (${r.to}) has no variable ${missing}`, {
          fields: { [`recipients[${i}].variables.${missing}`]: [`the template uses {{${missing}}} and recipient ${r.to} does not give it`] },
          recipient: { index: i, to: r.to },
          variable: missing,
        });
      }
    }
  }
  return {
    name: (raw.name as string).trim(),
    message,
    media,
    recipients,
    startAt: startAt as number,
    window,
    pacing,
    warmup,
    skipNotOnWhatsApp: raw.skipNotOnWhatsApp === undefined ? true : (raw.skipNotOnWhatsApp as boolean),
  };
}

type Problem = (field: string, text: string) => void;

const MESSAGE_KEYS = ['type', 'text', 'media', 'location', 'contact', 'poll'];
const MEDIA_KEYS = ['url', 'base64', 'mimetype', 'filename'];

/** The bytes a padded base64 string decodes to, without decoding it. */
const base64Size = (b64: string) => (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);

function messageOf(raw: unknown, problem: Problem, limits: CampaignBodyLimits): { message: CampaignMessage; media: CampaignMediaInput | null } {
  const none: CampaignMessage = { type: 'text', text: null, media: null, location: null, contact: null, poll: null };
  if (!isObject(raw)) {
    problem('message', 'message must be a send body (CONTRACT 10) without `to`');
    return { message: none, media: null };
  }
  const type = (raw.type ?? 'text') as CampaignMessageType;
  if (!(CAMPAIGN_MESSAGE_TYPES as readonly unknown[]).includes(type)) {
    problem('message.type', `a campaign sends ${CAMPAIGN_MESSAGE_TYPES.join(', ')}`);
    return { message: none, media: null };
  }
  for (const key of Object.keys(raw)) if (!MESSAGE_KEYS.includes(key)) problem(`message.${key}`, 'property should not exist');
  const m: CampaignMessage = { ...none, type };
  if (type === 'text') {
    if (typeof raw.text !== 'string' || raw.text.length < 1 || raw.text.length > TEXT_MAX) problem('message.text', `text must be 1..${TEXT_MAX} characters`);
    else m.text = raw.text;
  } else if (isCaptionedMediaType(type)) {
    // the caption, a template like a text's; optional
    if (raw.text !== undefined && (typeof raw.text !== 'string' || raw.text.length < 1 || raw.text.length > CAPTION_MAX)) {
      problem('message.text', `text (the caption) must be 1..${CAPTION_MAX} characters for type ${type}`);
    } else if (typeof raw.text === 'string') m.text = raw.text;
  } else if (raw.text !== undefined) {
    problem('message.text', isMediaType(type) ? `a ${type} carries no caption: text is not allowed for type ${type}` : `text is not allowed for type ${type}`);
  }
  const media = isMediaType(type) ? mediaOf(raw.media, problem, limits) : null;
  if (!isMediaType(type) && raw.media !== undefined) problem('message.media', `media is not allowed for type ${type}`);
  if (type === 'location') {
    const l = raw.location;
    if (!isObject(l) || typeof l.latitude !== 'number' || typeof l.longitude !== 'number' || Math.abs(l.latitude) > 90 || Math.abs(l.longitude) > 180) {
      problem('message.location', 'location needs latitude (-90..90) and longitude (-180..180)');
    } else m.location = { latitude: l.latitude, longitude: l.longitude, name: typeof l.name === 'string' ? l.name : null, address: typeof l.address === 'string' ? l.address : null };
  }
  if (type === 'contact') {
    const c = raw.contact;
    if (!isObject(c) || typeof c.fullName !== 'string' || typeof c.phoneNumber !== 'string') problem('message.contact', 'contact needs fullName and phoneNumber');
    else m.contact = { fullName: c.fullName, phoneNumber: c.phoneNumber };
  }
  if (type === 'poll') {
    const p = raw.poll;
    const options = isObject(p) && Array.isArray(p.options) ? p.options : null;
    if (!isObject(p) || typeof p.name !== 'string' || !options || options.length < 2 || options.length > 12 || !options.every((o) => typeof o === 'string')) {
      problem('message.poll', 'poll needs a name and 2..12 options');
    } else m.poll = { name: p.name, options: options as string[], selectableCount: isInt(p.selectableCount, 1, options.length) ? p.selectableCount : 1 };
  }
  return { message: m, media };
}

/** A media type's `media`: `{url | base64, mimetype?, filename?}`, exactly one of url and base64, base64 within the size. */
function mediaOf(raw: unknown, problem: Problem, limits: CampaignBodyLimits): CampaignMediaInput | null {
  if (!isObject(raw)) return problem('message.media', 'media {url | base64, mimetype?, filename?} is required for a media type'), null;
  let ok = true;
  const bad = (field: string, text: string) => ((ok = false), problem(`message.media${field}`, text));
  for (const key of Object.keys(raw)) if (!MEDIA_KEYS.includes(key)) bad(`.${key}`, 'property should not exist');
  const { url, base64, mimetype, filename } = raw;
  if ((url === undefined) === (base64 === undefined)) bad('', 'exactly one of media.url and media.base64 is required');
  else if (url !== undefined) {
    const urlProblem = httpUrlProblem(url);
    if (urlProblem) bad('.url', urlProblem);
  } else if (typeof base64 !== 'string' || !isPaddedBase64(base64)) bad('.base64', 'base64 must be non-empty padded base64');
  else if (base64Size(base64) > limits.mediaMaxBytes) bad('.base64', `must be at most ${limits.mediaMaxBytes} bytes`);
  if (mimetype !== undefined && (typeof mimetype !== 'string' || mimetype.length > 255 || !MIMETYPE.test(mimetype))) bad('.mimetype', 'mimetype must be a MIME type like image/jpeg');
  if (filename !== undefined && (typeof filename !== 'string' || filename.length < 1 || filename.length > 255 || !FILENAME.test(filename))) {
    bad('.filename', 'filename must be 1..255 characters without slashes, NUL or line breaks');
  }
  if (!ok) return null;
  return {
    url: (url as string | undefined) ?? null,
    base64: (base64 as string | undefined) ?? null,
    mimetype: (mimetype as string | undefined) ?? null,
    filename: (filename as string | undefined) ?? null,
  };
}

function windowOf(raw: unknown, problem: Problem): SendWindow | null {
  if (!isObject(raw)) return problem('window', 'window must be {days, from, to, timeZone}'), null;
  const days = raw.days;
  if (!Array.isArray(days) || days.length === 0 || !days.every((d) => (WEEKDAYS as readonly unknown[]).includes(d))) {
    problem('window.days', `days must be a non-empty list of ${WEEKDAYS.join(', ')}`);
    return null;
  }
  if (typeof raw.from !== 'string' || typeof raw.to !== 'string' || typeof raw.timeZone !== 'string') {
    problem('window', 'window needs from, to (HH:mm) and timeZone');
    return null;
  }
  const w: SendWindow = { days: [...new Set(days)] as SendWindow['days'], from: raw.from, to: raw.to, timeZone: raw.timeZone };
  for (const [field, texts] of Object.entries(windowProblems(w))) for (const t of texts) problem(field, t);
  return w;
}

function pacingOf(raw: unknown, problem: Problem): CampaignPacing {
  if (!isObject(raw)) return problem('pacing', 'pacing must be {minDelayMs, maxDelayMs, typing, perHour?, perDay?}'), DEFAULT_PACING;
  const { minDelayMs, maxDelayMs, typing, perHour, perDay } = raw;
  if (!isInt(minDelayMs, 0, 86_400_000)) problem('pacing.minDelayMs', 'minDelayMs must be an integer 0..86400000');
  if (!isInt(maxDelayMs, 0, 86_400_000) || (isInt(minDelayMs, 0) && (maxDelayMs as number) < minDelayMs)) problem('pacing.maxDelayMs', 'maxDelayMs must be an integer, at least minDelayMs');
  if (typing !== undefined && typeof typing !== 'boolean') problem('pacing.typing', 'typing must be a boolean');
  if (perHour !== undefined && perHour !== null && !isInt(perHour, 1)) problem('pacing.perHour', 'perHour must be a positive integer');
  if (perDay !== undefined && perDay !== null && !isInt(perDay, 1)) problem('pacing.perDay', 'perDay must be a positive integer');
  return {
    minDelayMs: minDelayMs as number,
    maxDelayMs: maxDelayMs as number,
    typing: typing === undefined ? true : (typing as boolean),
    perHour: (perHour as number | undefined) ?? null,
    perDay: (perDay as number | undefined) ?? null,
  };
}

function warmupOf(raw: unknown, problem: Problem): CampaignWarmup | null {
  if (!isObject(raw) || !isInt(raw.startPerDay, 1) || typeof raw.growthPercent !== 'number' || raw.growthPercent < 0 || raw.growthPercent > 1000) {
    problem('warmup', 'warmup must be {startPerDay: integer ≥ 1, growthPercent: 0..1000}');
    return null;
  }
  return { startPerDay: raw.startPerDay, growthPercent: raw.growthPercent };
}

/** `recipients` (JSON) or `recipientsCsv` (a header row; `to` or `phone` is the number, other columns variables). */
function recipientsOf(raw: Record<string, unknown>, problem: Problem): CampaignBody['recipients'] {
  let list: unknown[];
  let field = 'recipients';
  if (raw.recipients !== undefined && raw.recipientsCsv !== undefined) {
    problem('recipients', 'give recipients or recipientsCsv, not both');
    return [];
  }
  if (raw.recipientsCsv !== undefined) {
    field = 'recipientsCsv';
    if (typeof raw.recipientsCsv !== 'string') return problem(field, 'recipientsCsv must be CSV text with a header row'), [];
    try {
      const rows: Array<Record<string, string>> = parse(raw.recipientsCsv, { columns: (h: string[]) => h.map((c) => c.trim()), skip_empty_lines: true, trim: true, bom: true });
      list = rows.map((r) => {
        const { to, phone, ...variables } = r;
        return { to: to ?? phone, variables };
      });
    } catch (err) {
      return problem(field, `recipientsCsv is not valid CSV: ${err instanceof Error ? err.message : String(err)}`), [];
    }
  } else if (Array.isArray(raw.recipients)) list = raw.recipients;
  else return problem('recipients', 'recipients (a list of {to, variables?}) or recipientsCsv is required'), [];
  if (list.length < 1 || list.length > CAMPAIGN_MAX_RECIPIENTS) {
    problem(field, `a campaign has 1..${CAMPAIGN_MAX_RECIPIENTS} recipients (this one has ${list.length})`);
    return [];
  }
  const out: CampaignBody['recipients'] = [];
  const seen = new Set<string>();
  for (const [i, r] of list.entries()) {
    const to = isObject(r) && typeof r.to === 'string' ? (normalizeChatJid(r.to) ?? r.to) : null;
    if (!to || !CHAT_JID_PATTERN.test(to) || to.endsWith('@g.us')) {
      problem(`${field}[${i}].to`, 'to must be a phone number or a user JID');
      continue;
    }
    const variables = (r as Record<string, unknown>).variables;
    if (variables !== undefined && variables !== null && (!isObject(variables) || !Object.values(variables).every((v) => typeof v === 'string' || typeof v === 'number'))) {
      problem(`${field}[${i}].variables`, 'variables must be an object of strings');
      continue;
    }
    // one message per number: a repeat of a number in the list is dropped (never two sends to one recipient)
    if (seen.has(to)) continue;
    seen.add(to);
    out.push({ to, variables: variables ? Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(v)])) : null });
  }
  return out;
}
