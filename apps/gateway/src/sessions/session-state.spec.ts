import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_STATUSES, type SessionStatus } from '@app/contracts';
import type { CloseReason } from '../engine/engine.interface';
import {
  initialState,
  RECORDED_STATUSES,
  SESSION_PHASES,
  SessionEffect,
  SessionInput,
  SessionPhase,
  SessionState,
  transition,
  TransitionContext,
} from './session-state';

/**
 * The status machine as a table: each row a state, an input, and what the transition decides (the phase it goes to, the
 * status it records, the effects in order). The same rows, rendered, are the state table of docs/sessions.md; the last
 * test fails when the doc and the function drift apart (WRITE_SESSION_TABLE=1 rewrites the doc's table).
 */

const NOW = 1_800_000_000_000;
const ctx: TransitionContext = {
  now: NOW,
  random: () => 0, // no jitter: the delays in the table are the capped exponential ones
  settings: { qrMaxRetries: 5, qrTtlMs: 20_000, reconnectMaxAttempts: 5, reconnectBaseDelayMs: 1000, reconnectMaxDelayMs: 30_000 },
};
const GEN = 7;
const ACCOUNT = { jid: '15550001111@s.whatsapp.net', lid: '99887766@lid', phoneNumber: '15550001111' };

/** A state in the given phase with the status that phase shows, as a session reaches it. */
function at(phase: SessionPhase, status: SessionStatus, more: Partial<SessionState> = {}): SessionState {
  return { ...initialState(status), phase, reason: 'earlier', ...more };
}
const stopped = at('idle', 'stopped');
const connecting = at('connecting', 'starting');
const pairing = at('pairing', 'scan_qr_code', { qrShown: 1 });
const working = at('open', 'working', { openedSinceStart: true });
const retrying = at('backing_off', 'reconnecting', { openedSinceStart: true, failedConnects: 1 });
const close = (reason: CloseReason, statusCode: number | null, message: string): SessionInput => ({ kind: 'close', gen: GEN, reason, statusCode, message });

interface Row {
  /** what the row shows (the doc's first column) */
  when: string;
  from: SessionState;
  input: SessionInput;
  to: SessionPhase;
  /** the status and reason recorded, or null when none is */
  records: [SessionStatus, string] | null;
  effects: string[];
}

const ROWS: Row[] = [
  { when: 'start', from: stopped, input: { kind: 'start', restart: false, paired: false }, to: 'connecting', records: ['starting', 'start_requested'], effects: ['status', 'open_socket'] },
  { when: 'start while running (ignored)', from: working, input: { kind: 'start', restart: false, paired: true }, to: 'open', records: null, effects: [] },
  {
    when: 'restart',
    from: working,
    input: { kind: 'start', restart: true, paired: true },
    to: 'connecting',
    records: ['starting', 'restart_requested'],
    effects: ['close_socket', 'clear_qr', 'status', 'open_socket'],
  },
  { when: 'QR shown', from: connecting, input: { kind: 'qr', gen: GEN, qr: 'Q' }, to: 'pairing', records: ['scan_qr_code', 'qr_shown'], effects: ['show_qr', 'status', 'publish auth.qr'] },
  {
    when: 'QR number QR_MAX_RETRIES + 1',
    from: at('pairing', 'scan_qr_code', { qrShown: 5 }),
    input: { kind: 'qr', gen: GEN, qr: 'Q' },
    to: 'idle',
    records: ['failed', 'qr_not_scanned'],
    effects: ['close_socket', 'clear_qr', 'release_lease', 'status'],
  },
  {
    when: 'pairing code requested',
    from: pairing,
    input: { kind: 'code_requested', gen: GEN },
    to: 'pairing',
    records: ['scan_qr_code', 'pairing_code_requested'],
    effects: ['status'],
  },
  {
    when: 'QR on the socket a code was requested on (not counted)',
    from: at('pairing', 'scan_qr_code', { qrShown: 5, codeRequestedOn: GEN }),
    input: { kind: 'qr', gen: GEN, qr: 'Q' },
    to: 'pairing',
    records: ['scan_qr_code', 'pairing_code_requested'],
    effects: ['show_qr', 'status', 'publish auth.qr'],
  },
  {
    when: 'QR after a drop while a code was typed',
    from: at('connecting', 'starting', { codeDropped: 'pairing_code_dropped: Connection Terminated (close code 428)' }),
    input: { kind: 'qr', gen: GEN, qr: 'Q' },
    to: 'pairing',
    records: ['scan_qr_code', 'pairing_code_dropped: Connection Terminated (close code 428)'],
    effects: ['show_qr', 'status', 'publish auth.qr'],
  },
  {
    when: 'connection open',
    from: pairing,
    input: { kind: 'open', account: ACCOUNT },
    to: 'open',
    records: ['working', 'connected'],
    effects: ['clear_qr', 'status', 'publish session.connected', 'drain_sends'],
  },
  { when: 'close `restart_required` (515)', from: working, input: close('restart_required', 515, 'Stream Errored (restart required)'), to: 'connecting', records: null, effects: ['publish session.disconnected', 'open_socket'] },
  {
    when: 'close `restart_required`, the 4th in a row',
    from: at('connecting', 'working', { openedSinceStart: true, restartsInARow: 3 }),
    input: close('restart_required', 515, 'Stream Errored (restart required)'),
    to: 'backing_off',
    records: ['reconnecting', 'connection_lost: restart requested 4 times in a row: Stream Errored (restart required) (close code 515)'],
    effects: ['publish session.disconnected', 'log warn', 'status, next attempt in 1000 ms', 'schedule_retry 1000 ms'],
  },
  {
    when: 'close `transient`, never open since the start',
    from: pairing,
    input: close('transient', 428, 'Connection Terminated'),
    to: 'backing_off',
    records: ['starting', 'connect_failed: Connection Terminated (close code 428)'],
    effects: ['log warn', 'status, next attempt in 1000 ms', 'schedule_retry 1000 ms'],
  },
  {
    when: 'close `transient`, open since the start',
    from: working,
    input: close('transient', 500, 'Stream Errored (ack)'),
    to: 'backing_off',
    records: ['reconnecting', 'connection_lost: Stream Errored (ack) (close code 500)'],
    effects: ['publish session.disconnected', 'log warn', 'status, next attempt in 1000 ms', 'schedule_retry 1000 ms'],
  },
  {
    when: 'close `transient` while a pairing code is typed',
    from: at('pairing', 'scan_qr_code', { codeRequestedOn: GEN }),
    input: close('transient', 428, 'Connection Terminated'),
    to: 'backing_off',
    records: ['starting', 'pairing_code_dropped: Connection Terminated (close code 428)'],
    effects: ['log warn', 'status, next attempt in 1000 ms', 'schedule_retry 1000 ms'],
  },
  {
    when: 'connect error, the 2nd in a row, open since the start',
    from: at('connecting', 'reconnecting', { openedSinceStart: true, failedConnects: 1 }),
    input: { kind: 'connect_failed', gen: GEN, cause: 'getaddrinfo ENOTFOUND web.whatsapp.com' },
    to: 'backing_off',
    records: ['reconnecting', 'connection_lost: getaddrinfo ENOTFOUND web.whatsapp.com'],
    effects: ['log warn', 'status, next attempt in 2000 ms', 'schedule_retry 2000 ms'],
  },
  {
    when: 'connect error, the RECONNECT_MAX_ATTEMPTS-th, never paired',
    from: at('connecting', 'starting', { failedConnects: 4 }),
    input: { kind: 'connect_failed', gen: GEN, cause: 'connect ECONNREFUSED 1.2.3.4:443' },
    to: 'idle',
    records: ['failed', 'reconnect_attempts_exhausted: connect_failed: connect ECONNREFUSED 1.2.3.4:443'],
    effects: ['log warn', 'cancel_retry', 'clear_qr', 'release_lease', 'status'],
  },
  {
    when: 'connect error, the RECONNECT_MAX_ATTEMPTS-th, paired (never gives up)',
    from: at('connecting', 'starting', { failedConnects: 9, pairedAtStart: true }),
    input: { kind: 'connect_failed', gen: GEN, cause: 'connect ECONNREFUSED 1.2.3.4:443' },
    to: 'backing_off',
    records: ['starting', 'connect_failed: connect ECONNREFUSED 1.2.3.4:443'],
    effects: ['log warn', 'status, next attempt in 30000 ms', 'schedule_retry 30000 ms'],
  },
  {
    when: 'lease held by another gateway',
    from: connecting,
    input: { kind: 'lease_held_elsewhere', gen: GEN },
    to: 'backing_off',
    records: ['reconnecting', 'lease_held_elsewhere'],
    effects: ['log info', 'status', 'schedule_retry 1000 ms'],
  },
  { when: 'retry due', from: retrying, input: { kind: 'retry_due' }, to: 'connecting', records: null, effects: ['open_socket'] },
  { when: 'retry due after a stop (ignored)', from: stopped, input: { kind: 'retry_due' }, to: 'idle', records: null, effects: [] },
  {
    when: 'close `logged_out` (401), paired',
    from: working,
    input: close('logged_out', 401, 'Connection Failure'),
    to: 'idle',
    records: ['logged_out', 'unlinked_on_phone'],
    effects: ['publish session.disconnected', 'clear_credentials', 'clear_qr', 'release_lease', 'status', 'publish session.logged_out'],
  },
  {
    when: 'close `logged_out` (401), never paired',
    from: pairing,
    input: close('logged_out', 401, 'Connection Failure'),
    to: 'connecting',
    records: ['starting', 'pairing_expired'],
    effects: ['clear_credentials', 'clear_qr', 'status', 'open_socket (if current)'],
  },
  {
    when: 'close `replaced` (440)',
    from: working,
    input: close('replaced', 440, 'Stream Errored (conflict)'),
    to: 'backing_off',
    records: ['reconnecting', 'connection_lost: Stream Errored (conflict) (close code 440)'],
    effects: ['publish session.disconnected', 'log warn', 'status, next attempt in 1000 ms', 'schedule_retry 1000 ms'],
  },
  {
    when: 'close `replaced` again within 10 min',
    from: at('open', 'working', { openedSinceStart: true, lastReplacedAt: NOW - 60_000 }),
    input: close('replaced', 440, 'Stream Errored (conflict)'),
    to: 'idle',
    records: ['failed', 'replaced'],
    effects: ['publish session.disconnected', 'cancel_retry', 'clear_qr', 'release_lease', 'status'],
  },
  {
    when: 'close `forbidden` (403)',
    from: working,
    input: close('forbidden', 403, 'Connection Failure'),
    to: 'idle',
    records: ['failed', 'forbidden'],
    effects: ['publish session.disconnected', 'cancel_retry', 'clear_qr', 'release_lease', 'status'],
  },
  {
    when: 'close `client_version_refused` (405)',
    from: pairing,
    input: close('client_version_refused', 405, 'Connection Failure'),
    to: 'backing_off',
    records: ['starting', 'client_version_refused'],
    effects: ['client_version_refused', 'log warn', 'status, next attempt in 300000 ms', 'schedule_retry 300000 ms'],
  },
  {
    when: 'close `bad_session` (credentials of another engine)',
    from: connecting,
    input: close('bad_session', 500, 'Bad session'),
    to: 'idle',
    records: ['logged_out', 'credentials_unusable: Bad session (close code 500); start the session and scan a new QR'],
    effects: ['log warn', 'clear_credentials', 'clear_qr', 'release_lease', 'status', 'publish session.logged_out'],
  },
  { when: 'close `closed_by_us`', from: working, input: close('closed_by_us', null, 'closed'), to: 'open', records: null, effects: [] },
  {
    when: 'credentials refused by the engine',
    from: connecting,
    input: { kind: 'credentials_unusable', detail: 'written by the sim engine' },
    to: 'idle',
    records: ['logged_out', 'credentials_unusable: written by the sim engine; start the session and scan a new QR'],
    effects: ['log warn', 'clear_credentials', 'clear_qr', 'release_lease', 'status', 'publish session.logged_out'],
  },
  { when: 'stop', from: working, input: { kind: 'stop' }, to: 'idle', records: ['stopped', 'stop_requested'], effects: ['close_socket', 'clear_qr', 'release_lease', 'status'] },
  { when: 'logout, the live socket unlinked first', from: working, input: { kind: 'unlink', live: true }, to: 'idle', records: null, effects: ['close_socket (kept open)'] },
  {
    when: 'logout',
    from: stopped,
    input: { kind: 'logout' },
    to: 'idle',
    records: ['logged_out', 'logout_requested'],
    effects: ['close_socket', 'clear_credentials', 'clear_qr', 'release_lease', 'status', 'publish session.logged_out'],
  },
  { when: 'logout when logged out', from: at('idle', 'logged_out'), input: { kind: 'logout' }, to: 'idle', records: null, effects: ['close_socket', 'clear_credentials', 'clear_qr', 'release_lease'] },
  { when: 'shutdown or hand-off', from: working, input: { kind: 'shutdown' }, to: 'idle', records: null, effects: ['close_socket', 'release_lease'] },
  { when: 'lease lost', from: working, input: { kind: 'lease_lost' }, to: 'idle', records: null, effects: ['close_socket', 'forget_session'] },
  { when: 'row write fenced', from: working, input: { kind: 'fenced' }, to: 'idle', records: null, effects: ['close_socket', 'release_lease (quiet)'] },
];

/** An effect as the table shows it. */
function show(effect: SessionEffect): string {
  switch (effect.kind) {
    case 'status':
      return effect.nextAttemptAt ? `status, next attempt in ${effect.nextAttemptAt - NOW} ms` : 'status';
    case 'publish':
      return `publish ${effect.event.event}`;
    case 'log':
      return `log ${effect.level}`;
    case 'schedule_retry':
      return `schedule_retry ${effect.delayMs} ms`;
    case 'close_socket':
      return effect.keepSocket ? 'close_socket (kept open)' : 'close_socket';
    case 'release_lease':
      return effect.quiet ? 'release_lease (quiet)' : 'release_lease';
    case 'open_socket':
      return effect.ifCurrent === undefined ? 'open_socket' : 'open_socket (if current)';
    default:
      return effect.kind;
  }
}

const recorded = (effects: SessionEffect[]): [SessionStatus, string] | null => {
  const status = effects.find((e): e is Extract<SessionEffect, { kind: 'status' }> => e.kind === 'status');
  return status ? [status.status, status.reason] : null;
};

describe('session state machine', () => {
  it.each(ROWS.map((row) => [row.when, row] as const))('%s', (_when, row) => {
    const { state, effects } = transition(row.from, row.input, ctx);
    expect({ to: state.phase, records: recorded(effects), effects: effects.map(show) }).toEqual({ to: row.to, records: row.records, effects: row.effects });
    // the state says what it recorded; a transition that records nothing keeps the status it found
    expect(state.status).toBe(row.records?.[0] ?? row.from.status);
    if (row.records) expect(RECORDED_STATUSES[state.phase]).toContain(row.records[0]);
  });

  it('covers every input kind, every close kind, every phase and every public status', () => {
    const inputs = new Set(ROWS.map((r) => r.input.kind));
    const kinds: SessionInput['kind'][] = [
      'start', 'stop', 'unlink', 'logout', 'shutdown', 'lease_lost', 'fenced', 'retry_due', 'connect_failed', 'lease_held_elsewhere',
      'credentials_unusable', 'code_requested', 'qr', 'open', 'close',
    ];
    expect([...inputs].sort()).toEqual([...kinds].sort());
    const closes = new Set(ROWS.flatMap((r) => (r.input.kind === 'close' ? [r.input.reason] : [])));
    const reasons: CloseReason[] = ['restart_required', 'logged_out', 'replaced', 'forbidden', 'client_version_refused', 'transient', 'bad_session', 'closed_by_us'];
    expect([...closes].sort()).toEqual([...reasons].sort());
    expect([...new Set(ROWS.flatMap((r) => [r.from.phase, r.to]))].sort()).toEqual([...SESSION_PHASES].sort());
    expect([...new Set(ROWS.flatMap((r) => (r.records ? [r.records[0]] : [])))].sort()).toEqual([...SESSION_STATUSES].sort());
  });

  it('spreads a retry over half its delay with the draw, and counts it', () => {
    const { state, effects } = transition(working, close('transient', 500, 'x'), { ...ctx, random: () => 0.5 });
    expect(effects.map(show)).toContain('schedule_retry 750 ms');
    expect(state.failedConnects).toBe(1);
    // an open resets the counts the next failure starts from (not the 440 memory)
    const reopened = transition({ ...state, lastReplacedAt: NOW }, { kind: 'open', account: ACCOUNT }, ctx).state;
    expect(reopened).toMatchObject({ failedConnects: 0, restartsInARow: 0, qrShown: 0, lastReplacedAt: NOW });
  });

  it('is the state table of docs/sessions.md', () => {
    const path = join(__dirname, '../../../../docs/sessions.md');
    const doc = readFileSync(path, 'utf8');
    const begin = '<!-- state-table:begin (generated from apps/gateway/src/sessions/session-state.spec.ts; WRITE_SESSION_TABLE=1 rewrites it) -->\n';
    const end = '<!-- state-table:end -->';
    const table = renderTable();
    const from = doc.indexOf(begin);
    const to = doc.indexOf(end);
    expect(from).toBeGreaterThan(-1);
    expect(to).toBeGreaterThan(from);
    if (process.env.WRITE_SESSION_TABLE === '1') writeFileSync(path, doc.slice(0, from + begin.length) + table + doc.slice(to));
    else expect(doc.slice(from + begin.length, to)).toBe(table);
  });
});

/** The rows as the doc shows them, from what `transition` does (not from the expectations above). */
function renderTable(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const lines = ['| from (phase, status) | input | to phase | records (status, reason) | effects, in order |', '|---|---|---|---|---|'];
  for (const row of ROWS) {
    const { state, effects } = transition(row.from, row.input, ctx);
    const rec = recorded(effects);
    lines.push(
      `| \`${row.from.phase}\`, \`${row.from.status}\` | ${cell(row.when)} | \`${state.phase}\` | ${rec ? cell(`\`${rec[0]}\` (${rec[1]})`) : '(unchanged)'} | ${cell(effects.map(show).join(', ') || 'none')} |`,
    );
  }
  return `${lines.join('\n')}\n\n| phase | statuses a transition into it records |\n|---|---|\n${SESSION_PHASES.map((p) => `| \`${p}\` | ${RECORDED_STATUSES[p].map((s) => `\`${s}\``).join(', ')} |`).join('\n')}\n`;
}
