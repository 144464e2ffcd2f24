import { DateTime } from 'luxon';
import type { CampaignPacing, CapCounters, SendWindow } from '@app/contracts';
import { capState, dailyCap, pacingDelay, windowProblems, windowState } from './send-window';
import { missingVariable, renderTemplate } from './template';

const NY = 'America/New_York';
const at = (iso: string, zone: string) => DateTime.fromISO(iso, { zone }).toMillis();
const weekdays: SendWindow = { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], from: '09:00', to: '18:00', timeZone: NY };
const pacing: CampaignPacing = { minDelayMs: 1000, maxDelayMs: 2000, typing: false, perHour: null, perDay: 3 };
const fresh: CapCounters = { dayKey: null, dayCount: 0, daysSent: 0, hourKey: null, hourCount: 0 };

describe('windowState', () => {
  it('opens at 09:00 local time on both sides of the spring-forward change (UTC-5 then UTC-4)', () => {
    // 2026-03-08: New York moves from EST (UTC-5) to EDT (UTC-4) at 02:00
    const before = windowState(at('2026-03-07T20:00', NY), weekdays);
    expect(before).toEqual({ open: false, opensAt: Date.UTC(2026, 2, 8, 13, 0) }); // 09:00 EDT = 13:00 UTC
    const saturday = windowState(at('2026-03-07T08:59', NY), weekdays);
    expect(saturday).toEqual({ open: false, opensAt: Date.UTC(2026, 2, 7, 14, 0) }); // 09:00 EST = 14:00 UTC
    expect(windowState(Date.UTC(2026, 2, 8, 13, 0), weekdays)).toEqual({ open: true, closesAt: Date.UTC(2026, 2, 8, 22, 0) });
  });

  it('a window inside the skipped hour of spring-forward opens at the first valid instant', () => {
    const night: SendWindow = { ...weekdays, from: '02:30', to: '04:00' };
    // 02:30 does not exist on 2026-03-08 in New York: luxon moves it to 03:30 EDT (07:30 UTC)
    const state = windowState(at('2026-03-08T01:00', NY), night);
    expect(state.open).toBe(false);
    expect(state).toEqual({ open: false, opensAt: Date.UTC(2026, 2, 8, 7, 30) });
  });

  it('across fall-back the window is 09:00–18:00 local both days (UTC-4 then UTC-5)', () => {
    // 2026-11-01: EDT → EST at 02:00
    expect(windowState(at('2026-10-31T18:30', NY), weekdays)).toEqual({ open: false, opensAt: Date.UTC(2026, 10, 1, 14, 0) });
    expect(windowState(Date.UTC(2026, 9, 31, 21, 59), weekdays)).toEqual({ open: true, closesAt: Date.UTC(2026, 9, 31, 22, 0) });
  });

  it('skips days not in the window and is always open without one', () => {
    const workdays: SendWindow = { ...weekdays, days: ['mon', 'tue', 'wed', 'thu', 'fri'] };
    // Saturday 2026-03-07 noon → Monday 09:00 EDT
    expect(windowState(at('2026-03-07T12:00', NY), workdays)).toEqual({ open: false, opensAt: Date.UTC(2026, 2, 9, 13, 0) });
    expect(windowState(0, null).open).toBe(true);
  });

  it('refuses an unknown zone and a window that crosses midnight', () => {
    expect(windowProblems({ ...weekdays, timeZone: 'Mars/Olympus' })['window.timeZone']).toBeDefined();
    expect(windowProblems({ ...weekdays, from: '18:00', to: '09:00' })['window.to']).toBeDefined();
    expect(windowProblems(weekdays)).toEqual({});
  });
});

describe('capState', () => {
  /** Sends as many as the caps allow from `start`, one per minute, for `minutes`; returns the instants sent at. */
  function run(start: number, minutes: number, zone: string, p: CampaignPacing, warmup: { startPerDay: number; growthPercent: number } | null): number[] {
    let c = fresh;
    const sent: number[] = [];
    for (let t = start; t < start + minutes * 60_000; t += 60_000) {
      const s = capState(t, zone, p, warmup, c);
      if (s.open) {
        c = s.counters;
        sent.push(t);
      } else expect(s.opensAt).toBeGreaterThan(t);
    }
    return sent;
  }

  it('holds the daily cap per calendar day in the campaign\'s zone across its midnight (not UTC\'s)', () => {
    const zone = 'Asia/Jakarta'; // UTC+7: its midnight is 17:00 UTC
    const sent = run(at('2026-05-10T22:00', zone), 4 * 60, zone, pacing, null);
    const days = new Map<string, number>();
    for (const t of sent) {
      const day = DateTime.fromMillis(t, { zone }).toISODate()!;
      days.set(day, (days.get(day) ?? 0) + 1);
    }
    expect(Object.fromEntries(days)).toEqual({ '2026-05-10': 3, '2026-05-11': 3 });
    // the 4th of the first day waited for Jakarta's midnight exactly
    expect(sent[3]).toBe(at('2026-05-11T00:00', zone));
  });

  it('says when the cap opens again: the next local midnight, or the next hour', () => {
    const t = at('2026-05-10T22:00', NY);
    const full: CapCounters = { dayKey: '2026-05-10', dayCount: 3, daysSent: 0, hourKey: null, hourCount: 0 };
    expect(capState(t, NY, pacing, null, full)).toEqual({ open: false, opensAt: at('2026-05-11T00:00', NY), why: 'perDay' });
    const hourly = { ...pacing, perDay: null, perHour: 2 };
    const hourFull: CapCounters = { ...fresh, hourKey: String(Math.floor(t / 3_600_000)), hourCount: 2 };
    expect(capState(t, NY, hourly, null, hourFull)).toEqual({ open: false, opensAt: (Math.floor(t / 3_600_000) + 1) * 3_600_000, why: 'perHour' });
  });

  it('warm-up: the daily cap grows day by day, under perDay', () => {
    const warm = { startPerDay: 2, growthPercent: 50 };
    expect([0, 1, 2, 3].map((d) => dailyCap({ ...pacing, perDay: null }, warm, d))).toEqual([2, 3, 4, 6]);
    expect(dailyCap({ ...pacing, perDay: 5 }, warm, 3)).toBe(5);
    const sent = run(at('2026-05-10T00:00', 'UTC'), 3 * 24 * 60, 'UTC', { ...pacing, perDay: null }, warm);
    expect(sent.length).toBe(2 + 3 + 4);
  });
});

describe('pacingDelay and templates', () => {
  it('draws within [min, max]', () => {
    expect(pacingDelay(pacing, () => 0)).toBe(1000);
    expect(pacingDelay(pacing, () => 0.999999)).toBe(2000);
  });

  it('renders variables and names the first missing one', () => {
    expect(renderTemplate('Hi {{ name }}, order {{order}}', { name: 'Ana', order: 'A-1' })).toBe('Hi Ana, order A-1');
    expect(missingVariable('Hi {{name}} {{order}}', { name: 'x' })).toBe('order');
    expect(missingVariable('no variables', {})).toBeNull();
  });
});
