import { DateTime } from 'luxon';
import type { CampaignPacing, CampaignWarmup, CapCounters, SendWindow, Weekday } from '@app/contracts';

/**
 * When a campaign may send (CONTRACT 17): its window (days and hours in an IANA time zone) and its caps (per hour, per
 * day, the warm-up's growing daily cap). Pure functions of an instant, so a unit spec drives them across a DST change
 * or a midnight with an injected clock. Wall-clock times go through luxon, which resolves a time a DST change skips
 * (02:30 on a spring-forward night) to the next valid instant and an hour it repeats to its first occurrence.
 */

const WEEKDAY_OF_LUXON: Record<number, Weekday> = { 1: 'mon', 2: 'tue', 3: 'wed', 4: 'thu', 5: 'fri', 6: 'sat', 7: 'sun' };
const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

export type WindowState = { open: true; closesAt: number } | { open: false; opensAt: number };

/** Problems of a window as a client sent it (field → problem), empty when it is valid. */
export function windowProblems(w: SendWindow): Record<string, string[]> {
  const problems: Record<string, string[]> = {};
  if (!DateTime.local().setZone(w.timeZone).isValid) problems['window.timeZone'] = [`${w.timeZone} is not an IANA time zone`];
  if (!HH_MM.test(w.from)) problems['window.from'] = ['must be HH:mm'];
  if (!HH_MM.test(w.to)) problems['window.to'] = ['must be HH:mm'];
  else if (HH_MM.test(w.from) && w.from >= w.to) problems['window.to'] = ['must be after window.from (a window does not cross midnight)'];
  return problems;
}

const at = (day: DateTime, hhmm: string) => {
  const [hour, minute] = hhmm.split(':').map(Number);
  return day.set({ hour, minute, second: 0, millisecond: 0 });
};

/** Whether `now` is inside the window, and until when; or when it opens next. Null window: always open. */
export function windowState(now: number, w: SendWindow | null): WindowState {
  if (!w) return { open: true, closesAt: Number.POSITIVE_INFINITY };
  const today = DateTime.fromMillis(now, { zone: w.timeZone }).startOf('day');
  for (let i = 0; i <= 7; i++) {
    const day = today.plus({ days: i });
    if (!w.days.includes(WEEKDAY_OF_LUXON[day.weekday])) continue;
    const from = at(day, w.from).toMillis();
    const to = at(day, w.to).toMillis();
    if (now < from) return { open: false, opensAt: from };
    if (now < to) return { open: true, closesAt: to };
  }
  // no day of the window in the coming week (an empty `days` is refused at creation)
  return { open: false, opensAt: today.plus({ days: 8 }).toMillis() };
}

/** The day (in the campaign's time zone, `yyyy-MM-dd`) and the hour (UTC hours since the epoch) of an instant. */
export function capKeys(now: number, timeZone: string): { day: string; hour: string } {
  return { day: DateTime.fromMillis(now, { zone: timeZone }).toISODate()!, hour: String(Math.floor(now / 3_600_000)) };
}

/** The next midnight in the time zone after `now`. */
export function nextDayStart(now: number, timeZone: string): number {
  return DateTime.fromMillis(now, { zone: timeZone }).startOf('day').plus({ days: 1 }).toMillis();
}

/** The daily cap on the `dayIndex`-th sending day (0: the first): the warm-up's, under `perDay`; null: none. */
export function dailyCap(pacing: CampaignPacing, warmup: CampaignWarmup | null, dayIndex: number): number | null {
  const warm = warmup ? Math.floor(warmup.startPerDay * Math.pow(1 + warmup.growthPercent / 100, dayIndex)) : null;
  const caps = [pacing.perDay ?? null, warm].filter((c): c is number => c !== null);
  return caps.length === 0 ? null : Math.min(...caps);
}

export type CapState = { open: true; counters: CapCounters } | { open: false; opensAt: number; why: 'perHour' | 'perDay' };

/**
 * Whether one more message fits the caps at `now`, and the counters after it is sent (a new day or hour starts from
 * zero; a new day after a day with sends moves the warm-up one day on); or when the next one fits.
 */
export function capState(now: number, timeZone: string, pacing: CampaignPacing, warmup: CampaignWarmup | null, c: CapCounters): CapState {
  const keys = capKeys(now, timeZone);
  const sameDay = c.dayKey === keys.day;
  const daysSent = sameDay || c.dayKey === null || c.dayCount === 0 ? c.daysSent : c.daysSent + 1;
  const dayCount = sameDay ? c.dayCount : 0;
  const hourCount = c.hourKey === keys.hour ? c.hourCount : 0;
  const perDay = dailyCap(pacing, warmup, daysSent);
  if (perDay !== null && dayCount >= perDay) return { open: false, opensAt: nextDayStart(now, timeZone), why: 'perDay' };
  if (pacing.perHour && hourCount >= pacing.perHour) return { open: false, opensAt: (Math.floor(now / 3_600_000) + 1) * 3_600_000, why: 'perHour' };
  return { open: true, counters: { dayKey: keys.day, dayCount: dayCount + 1, daysSent, hourKey: keys.hour, hourCount: hourCount + 1 } };
}

/** The delay before the next message: uniform in [minDelayMs, maxDelayMs]. */
export function pacingDelay(pacing: CampaignPacing, random: () => number = Math.random): number {
  return Math.round(pacing.minDelayMs + random() * (pacing.maxDelayMs - pacing.minDelayMs));
}
