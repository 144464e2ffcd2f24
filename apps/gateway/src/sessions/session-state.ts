/**
 * The status machine of one session on this gateway, as data: one enumerated phase (with the counters the decisions
 * read) and one pure `transition(state, input, context) → {state, effects}`. The SessionRunner (session-runner.ts) is the
 * imperative shell around it: it turns commands, socket outcomes and engine events into inputs, and carries out the
 * effects in order (row writes, events, the socket, the lease, timers). Nothing here does I/O, reads a clock or draws
 * a random number except through `context`, so every row of the table in docs/sessions.md ("Statuses") is a test of
 * this function (session-state.spec.ts) and the doc's table is checked against it (session-state-doc.spec.ts).
 */
import type { CatalogEvent, SessionLoggedOutPayload, SessionStatus } from '@app/contracts';
import type { AccountIdentity, CloseReason } from '../engine/engine.interface';
import { credentialsUnusableReason } from '../engine/credentials-unusable';
import type { RunnerSettings } from './session-ports';
import type { SessionRecordPatch } from '../store-ports';

/**
 * Where the session's connection stands on this gateway:
 * - `idle`: no socket wanted here (not started, stopped, failed, logged out, handed off or fenced out);
 * - `connecting`: a socket is being opened (lease, engine connect) and the network has not said anything yet;
 * - `pairing`: the network shows a QR on the socket (scan it, or type a pairing code);
 * - `open`: the connection is open (the account is linked and connected);
 * - `backing_off`: a connect failed; the next attempt waits for its timer.
 */
export type SessionPhase = 'idle' | 'connecting' | 'pairing' | 'open' | 'backing_off';

export const SESSION_PHASES: readonly SessionPhase[] = ['idle', 'connecting', 'pairing', 'open', 'backing_off'];

/**
 * The public statuses (SESSION_STATUSES) a transition into each phase records. A transition that records nothing keeps
 * the status it found: a hand-off (shutdown, lease lost, fenced out) leaves `working` on the row for the next holder,
 * and an immediate reconnect (515) or a due retry keeps what the session last said.
 */
export const RECORDED_STATUSES: { readonly [P in SessionPhase]: readonly SessionStatus[] } = {
  idle: ['stopped', 'failed', 'logged_out'],
  connecting: ['starting'],
  pairing: ['scan_qr_code'],
  open: ['working'],
  backing_off: ['starting', 'reconnecting'],
};

export interface SessionState {
  phase: SessionPhase;
  /** the status as last recorded and published, with its reason (null before this runner set one) */
  status: SessionStatus;
  reason: string | null;
  /** the row's nextAttemptAt (epoch ms) while a retry is scheduled and recorded */
  nextAttemptAt: number | null;
  /** QRs shown without a pairing since the start, the last open or the last code request */
  qrShown: number;
  /** the socket (its generation) a pairing code was requested on: its QRs do not count (the user types the code) */
  codeRequestedOn: number | null;
  /** a socket with a pairing code being typed dropped: the reason the next sockets' QRs show, until a new code or an open */
  codeDropped: string | null;
  /** failed connects in a row, since the start or the last open */
  failedConnects: number;
  /** restart requests (515) since the last open */
  restartsInARow: number;
  /** when the network last said another socket took the device (440) */
  lastReplacedAt: number | null;
  /** the row named an account when the session was started: a paired session never gives up reconnecting */
  pairedAtStart: boolean;
  /** a socket opened since the last start: a close after that is `reconnecting`, before it still `starting` */
  openedSinceStart: boolean;
}

/** A runner that has not started anything yet: the status is the row's, as the gateway found it. */
export function initialState(status: SessionStatus): SessionState {
  return {
    phase: 'idle',
    status,
    reason: null,
    nextAttemptAt: null,
    qrShown: 0,
    codeRequestedOn: null,
    codeDropped: null,
    failedConnects: 0,
    restartsInARow: 0,
    lastReplacedAt: null,
    pairedAtStart: false,
    openedSinceStart: false,
  };
}

/** What can happen to a session: a command, an outcome of opening a socket, or what its socket said. */
export type SessionInput =
  /** start (ignored while a socket is wanted) or restart (closes the current socket first); `paired`: the row names an account */
  | { kind: 'start'; restart: boolean; paired: boolean }
  | { kind: 'stop' }
  /** a logout's first step: the socket is let go (`live`: kept open for the network's logout, which the runner sends) */
  | { kind: 'unlink'; live: boolean }
  /** a logout's last step: credentials and account wiped, row kept */
  | { kind: 'logout' }
  /** gateway shutdown or the hand-off of a session placed elsewhere: socket closed, lease released, row left as is */
  | { kind: 'shutdown' }
  /** another gateway holds the lease now (the renewal found it taken) */
  | { kind: 'lease_lost' }
  /** the row refused a write: another gateway holds the session */
  | { kind: 'fenced' }
  /** the retry timer of a failed connect fired */
  | { kind: 'retry_due' }
  /** opening the socket of generation `gen` failed (lease store unreachable, the engine's connect threw) */
  | { kind: 'connect_failed'; gen: number; cause: string }
  /** the lease is held by another gateway (a handover in progress) */
  | { kind: 'lease_held_elsewhere'; gen: number }
  /** the engine refused the stored credentials before any socket (another engine's, or undecodable) */
  | { kind: 'credentials_unusable'; detail: string }
  /** a pairing code was requested on the socket of generation `gen` */
  | { kind: 'code_requested'; gen: number }
  | { kind: 'qr'; gen: number; qr: string }
  | { kind: 'open'; account: AccountIdentity }
  /** `cause`: the engine's message with the network's close code, as closeCause words it */
  | { kind: 'close'; gen: number; reason: CloseReason; statusCode: number | null; message: string };

export type SessionInputKind = SessionInput['kind'];

/** What the runner carries out, in this order, after a transition. */
export type SessionEffect =
  /** record (row) and announce (`session.status`) the status; see SessionRunner.setStatus */
  | { kind: 'status'; status: SessionStatus; reason: string; patch?: SessionRecordPatch; nextAttemptAt?: number | null }
  | { kind: 'publish'; event: CatalogEvent }
  /** open a new socket; with `ifCurrent`, only while the socket of that generation is still the current one */
  | { kind: 'open_socket'; ifCurrent?: number }
  /** after `delayMs`, the input `retry_due`, unless the socket of `gen` was replaced meanwhile */
  | { kind: 'schedule_retry'; gen: number; delayMs: number }
  | { kind: 'cancel_retry' }
  /** silence the current socket and close it (`keepSocket`: the caller still needs it, for the network's logout) */
  | { kind: 'close_socket'; keepSocket?: boolean }
  | { kind: 'show_qr'; qr: string; expiresAt: number; ttlMs: number }
  | { kind: 'clear_qr' }
  | { kind: 'clear_credentials' }
  /** the lease handed back and the engine told to forget the session (`quiet`: a failure to hand it back is ignored) */
  | { kind: 'release_lease'; quiet?: boolean }
  /** the engine told to forget the session, the lease (no longer ours) left alone */
  | { kind: 'forget_session' }
  | { kind: 'log'; level: 'info' | 'warn'; fields?: Record<string, unknown>; message: string }
  /** the operator is told that WhatsApp refused this WhatsApp Web version (ClientVersionAlarm) */
  | { kind: 'client_version_refused' }
  /** what was queued while the session was away goes out now */
  | { kind: 'drain_sends' };

export interface TransitionContext {
  /** epoch ms */
  now: number;
  /** [0, 1): the jitter draw of a scheduled retry (called only when one is scheduled) */
  random: () => number;
  settings: RunnerSettings;
}

export interface Transition {
  state: SessionState;
  effects: SessionEffect[];
}

/** How many restart requests (515) in a row, with no open between them, are answered by reconnecting at once. */
export const RESTARTS_AT_ONCE = 3;
/** A second `replaced` (440) within this long of the first ends in `failed`: another client keeps taking the device. */
export const REPLACED_REPEAT_WINDOW_MS = 10 * 60_000;
/** Reconnect delays are spread over [delay·(1-RECONNECT_JITTER), delay], so a node's sessions don't reconnect in one burst. */
export const RECONNECT_JITTER = 0.5;
/**
 * After a 405 (this WhatsApp Web version refused) the next attempt waits this many capped delays (5 min by default):
 * every session of the node announces the same version, and a node's worth of refused connects every 30 s is noise
 * WhatsApp sees, while the fix (a new WHATSAPP_WEB_VERSION, or the fetch) is the operator's.
 */
export const CLIENT_VERSION_REFUSED_DELAYS = 10;

const CLEARED_ACCOUNT: SessionRecordPatch = { phoneNumber: null, waJid: null, waLid: null };

/** What the engine said about a close, with the network's close code when it gave one. */
export function closeCause(event: { statusCode: number | null; message: string }): string {
  return event.statusCode === null ? event.message : `${event.message} (close code ${event.statusCode})`;
}

/** Whether the device completed a pairing: a paired session never gives up reconnecting. */
export function isPaired(state: SessionState): boolean {
  return state.pairedAtStart || state.openedSinceStart;
}

/** Each input kind with its own shape: the table below is checked per kind by the compiler. */
type InputOf = { [I in SessionInput as I['kind']]: I };
type Handler<K extends SessionInputKind> = (state: SessionState, input: InputOf[K], ctx: TransitionContext) => Transition;

/** No change, nothing to do. */
const same = (state: SessionState): Transition => ({ state, effects: [] });

/** The status effect, with the state's status fields set to what it records. */
function withStatus(state: SessionState, effect: Extract<SessionEffect, { kind: 'status' }>): SessionState {
  return { ...state, status: effect.status, reason: effect.reason, nextAttemptAt: effect.nextAttemptAt ?? null };
}

/** Ends the session's attempts here: no socket, no lease, `failed` with the reason. Credentials are kept. */
function stopFor(state: SessionState, reason: string, first: SessionEffect[] = [{ kind: 'cancel_retry' }]): Transition {
  const status = { kind: 'status', status: 'failed', reason } as const;
  return {
    state: withStatus({ ...state, phase: 'idle' }, status),
    effects: [...first, { kind: 'clear_qr' }, { kind: 'release_lease' }, status],
  };
}

/** The pairing is gone for good: credentials and account wiped, no reconnect (a warn line for unusable credentials). */
function loggedOut(state: SessionState, reason: string, eventReason: SessionLoggedOutPayload['reason']): Transition {
  const status = { kind: 'status', status: 'logged_out', reason, patch: { ...CLEARED_ACCOUNT, desiredState: 'stopped' } } as const;
  const warn: SessionEffect[] = eventReason === 'credentials_unusable' ? [{ kind: 'log', level: 'warn', fields: { reason }, message: 'stored credentials unusable; logged out' }] : [];
  return {
    state: withStatus({ ...state, phase: 'idle' }, status),
    effects: [
      ...warn,
      { kind: 'clear_credentials' },
      { kind: 'clear_qr' },
      { kind: 'release_lease' },
      status,
      { kind: 'publish', event: { event: 'session.logged_out', payload: { reason: eventReason } } },
    ],
  };
}

/**
 * `connection_lost: <cause>` once the session had a socket open since it was started, `connect_failed: <cause>`
 * before that: a session that never connected is not reconnecting, it is still starting (and says why).
 */
function failureReason(state: SessionState, cause: string): string {
  return `${state.openedSinceStart ? 'connection_lost' : 'connect_failed'}: ${cause}`;
}

/**
 * One failed connect: logged at warn with its cause, recorded as the status's reason, retried after
 * `min(base·2^(n-1), max)` (at least `minDelayMs`), less up to RECONNECT_JITTER of it at random. A session that never
 * paired ends in `failed` at its RECONNECT_MAX_ATTEMPTS-th failure in a row, still naming the last cause; a paired one
 * never gives up (after an outage of any length it comes back).
 */
function connectFailed(
  state: SessionState,
  ctx: TransitionContext,
  gen: number,
  reason: string,
  options: { waiting?: SessionStatus; minDelayMs?: number } = {},
): Transition {
  const failedConnects = state.failedConnects + 1;
  const counted = { ...state, failedConnects };
  const { reconnectMaxAttempts, reconnectBaseDelayMs, reconnectMaxDelayMs } = ctx.settings;
  const paired = isPaired(state);
  const attempt = { attempt: failedConnects, of: paired ? null : reconnectMaxAttempts, reason };
  if (!paired && failedConnects >= reconnectMaxAttempts) {
    const gaveUp = stopFor(counted, `reconnect_attempts_exhausted: ${reason}`);
    return { state: gaveUp.state, effects: [{ kind: 'log', level: 'warn', fields: attempt, message: 'connect failed; giving up' }, ...gaveUp.effects] };
  }
  // (minDelayMs may exceed the cap: a 405's wait is longer on purpose)
  const capped = Math.max(options.minDelayMs ?? 0, Math.min(reconnectBaseDelayMs * 2 ** Math.min(failedConnects - 1, 30), reconnectMaxDelayMs));
  const delayMs = Math.round(capped * (1 - RECONNECT_JITTER * ctx.random()));
  const nextAttemptAt = ctx.now + delayMs;
  // a wait for another gateway's lease is a handover, retried often: its row is not rewritten for every attempt
  const handover = reason === 'lease_held_elsewhere';
  const status = {
    kind: 'status',
    status: options.waiting ?? (state.openedSinceStart ? 'reconnecting' : 'starting'),
    reason,
    patch: {},
    nextAttemptAt: handover ? null : nextAttemptAt,
  } as const;
  const log: SessionEffect[] = handover
    ? []
    : [{ kind: 'log', level: 'warn', fields: { ...attempt, retryInMs: delayMs, nextAttemptAt: new Date(nextAttemptAt).toISOString() }, message: 'connect failed; retrying' }];
  return {
    state: withStatus({ ...counted, phase: 'backing_off' }, status),
    effects: [...log, status, { kind: 'schedule_retry', gen, delayMs }],
  };
}

/**
 * A 401 before the pairing completed (a pairing code never entered: WhatsApp forgets the half-made device): not the
 * user unlinking a device, so a fresh pairing (a new QR) with its own reason rather than `logged_out`. Counted as a
 * failed connect, so a network that keeps refusing fresh pairings still ends in `failed`.
 */
function pairingExpired(state: SessionState, ctx: TransitionContext, gen: number): Transition {
  const failedConnects = state.failedConnects + 1;
  if (failedConnects >= ctx.settings.reconnectMaxAttempts) return stopFor({ ...state, failedConnects }, 'reconnect_attempts_exhausted: pairing_expired');
  const status = { kind: 'status', status: 'starting', reason: 'pairing_expired', patch: CLEARED_ACCOUNT } as const;
  return {
    state: withStatus({ ...state, phase: 'connecting', failedConnects, qrShown: 0 }, status),
    effects: [{ kind: 'clear_credentials' }, { kind: 'clear_qr' }, status, { kind: 'open_socket', ifCurrent: gen }],
  };
}

/**
 * What a close means, as WhatsApp means it (the table in docs/baileys-engine.md). Only `logged_out` (401) and
 * `bad_session` wipe the credentials: every other close keeps the pairing, whatever it costs in retries.
 */
const closeHandlers: { [R in Exclude<CloseReason, 'closed_by_us'>]: (state: SessionState, input: Extract<SessionInput, { kind: 'close' }>, ctx: TransitionContext, typing: boolean) => Transition } = {
  // the network asks for a fresh socket right after pairing; not a failure, unless it keeps asking
  restart_required: (state, input, ctx) => {
    const restartsInARow = state.restartsInARow + 1;
    const next = { ...state, restartsInARow };
    if (restartsInARow <= RESTARTS_AT_ONCE) return { state: { ...next, phase: 'connecting' }, effects: [{ kind: 'open_socket' }] };
    return connectFailed(next, ctx, input.gen, failureReason(next, `restart requested ${restartsInARow} times in a row: ${closeCause(input)}`));
  },
  transient: (state, input, ctx, typing) => {
    if (!typing) return connectFailed(state, ctx, input.gen, failureReason(state, closeCause(input)));
    // the code being typed belongs to this socket: the next one needs a new code (the user is told to ask again)
    const codeDropped = `pairing_code_dropped: ${closeCause(input)}`;
    return connectFailed({ ...state, codeDropped }, ctx, input.gen, codeDropped);
  },
  logged_out: (state, input, ctx) => (isPaired(state) ? loggedOut(state, 'unlinked_on_phone', 'unlinked_on_phone') : pairingExpired(state, ctx, input.gen)),
  // another socket holds the device: often our own previous one (a handover, a restart) that WhatsApp has not dropped
  // yet, so try once more after a delay, holding the lease; a second time means another client keeps it
  replaced: (state, input, ctx) => {
    const repeated = state.lastReplacedAt !== null && ctx.now - state.lastReplacedAt < REPLACED_REPEAT_WINDOW_MS;
    const next = { ...state, lastReplacedAt: ctx.now };
    return repeated ? stopFor(next, 'replaced') : connectFailed(next, ctx, input.gen, failureReason(next, closeCause(input)));
  },
  // WhatsApp refuses the account (banned, or blocked from linking devices): retrying only makes it worse
  forbidden: (state) => stopFor(state, 'forbidden'),
  // the engine reads the version again before the next connect; the operator may have to update it, so wait long
  client_version_refused: (state, input, ctx) => {
    const failed = connectFailed(state, ctx, input.gen, 'client_version_refused', { minDelayMs: CLIENT_VERSION_REFUSED_DELAYS * ctx.settings.reconnectMaxDelayMs });
    return { state: failed.state, effects: [{ kind: 'client_version_refused' }, ...failed.effects] };
  },
  // the network refused the credential as another engine's (the engines refuse it first, CredentialsUnusableError)
  bad_session: (state, input) => loggedOut(state, credentialsUnusableReason(closeCause(input)), 'credentials_unusable'),
};

const handlers: { [K in SessionInputKind]: Handler<K> } = {
  start: (state, input) => {
    if (!input.restart && state.phase !== 'idle') return same(state);
    const status = { kind: 'status', status: 'starting', reason: input.restart ? 'restart_requested' : 'start_requested', patch: { desiredState: 'running' } } as const;
    const fresh: SessionState = {
      ...state,
      phase: 'connecting',
      qrShown: 0,
      codeRequestedOn: null,
      codeDropped: null,
      failedConnects: 0,
      restartsInARow: 0,
      lastReplacedAt: null,
      openedSinceStart: false,
      pairedAtStart: input.paired,
    };
    const closeFirst: SessionEffect[] = input.restart ? [{ kind: 'close_socket' }, { kind: 'clear_qr' }] : [];
    return { state: withStatus(fresh, status), effects: [...closeFirst, status, { kind: 'open_socket' }] };
  },
  stop: (state) => {
    const status = { kind: 'status', status: 'stopped', reason: 'stop_requested', patch: { desiredState: 'stopped' } } as const;
    return {
      state: withStatus({ ...state, phase: 'idle' }, status),
      effects: [{ kind: 'close_socket' }, { kind: 'clear_qr' }, { kind: 'release_lease' }, status],
    };
  },
  unlink: (state, input) => ({ state: { ...state, phase: 'idle' }, effects: [input.live ? { kind: 'close_socket', keepSocket: true } : { kind: 'close_socket' }] }),
  logout: (state) => {
    const letGo: SessionEffect[] = [{ kind: 'close_socket' }, { kind: 'clear_credentials' }, { kind: 'clear_qr' }, { kind: 'release_lease' }];
    // logging out a logged-out session changes nothing more
    if (state.status === 'logged_out') return { state: { ...state, phase: 'idle' }, effects: letGo };
    const status = { kind: 'status', status: 'logged_out', reason: 'logout_requested', patch: { ...CLEARED_ACCOUNT, desiredState: 'stopped' } } as const;
    return {
      state: withStatus({ ...state, phase: 'idle' }, status),
      effects: [...letGo, status, { kind: 'publish', event: { event: 'session.logged_out', payload: { reason: 'logout_requested' } } }],
    };
  },
  shutdown: (state) => ({ state: { ...state, phase: 'idle' }, effects: [{ kind: 'close_socket' }, { kind: 'release_lease' }] }),
  lease_lost: (state) => ({ state: { ...state, phase: 'idle' }, effects: [{ kind: 'close_socket' }, { kind: 'forget_session' }] }),
  fenced: (state) => ({ state: { ...state, phase: 'idle' }, effects: [{ kind: 'close_socket' }, { kind: 'release_lease', quiet: true }] }),
  retry_due: (state) => (state.phase === 'idle' ? same(state) : { state: { ...state, phase: 'connecting' }, effects: [{ kind: 'open_socket' }] }),
  connect_failed: (state, input, ctx) => connectFailed(state, ctx, input.gen, failureReason(state, input.cause)),
  // the session is live on another gateway (or was, a moment ago): from here that is a handover, not a first start
  lease_held_elsewhere: (state, input, ctx) => {
    const failed = connectFailed(state, ctx, input.gen, 'lease_held_elsewhere', { waiting: 'reconnecting' });
    return { state: failed.state, effects: [{ kind: 'log', level: 'info', message: 'session lease held by another gateway; retrying' }, ...failed.effects] };
  },
  credentials_unusable: (state, input) => loggedOut(state, credentialsUnusableReason(input.detail), 'credentials_unusable'),
  code_requested: (state, input) => {
    const status = { kind: 'status', status: state.status, reason: 'pairing_code_requested' } as const;
    return { state: withStatus({ ...state, codeRequestedOn: input.gen, codeDropped: null, qrShown: 0 }, status), effects: [status] };
  },
  qr: (state, input, ctx) => {
    const typing = state.codeRequestedOn === input.gen;
    const qrShown = typing ? state.qrShown : state.qrShown + 1;
    if (qrShown > ctx.settings.qrMaxRetries) return stopFor({ ...state, qrShown }, 'qr_not_scanned', [{ kind: 'close_socket' }]);
    const ttlMs = ctx.settings.qrTtlMs;
    const expiresAt = ctx.now + ttlMs;
    const status = { kind: 'status', status: 'scan_qr_code', reason: typing ? 'pairing_code_requested' : (state.codeDropped ?? 'qr_shown') } as const;
    return {
      state: withStatus({ ...state, phase: 'pairing', qrShown }, status),
      effects: [
        { kind: 'show_qr', qr: input.qr, expiresAt, ttlMs },
        status,
        { kind: 'publish', event: { event: 'auth.qr', payload: { qr: input.qr, expiresAt } } },
      ],
    };
  },
  open: (state, input, ctx) => {
    const { phoneNumber, jid, lid } = input.account;
    const status = { kind: 'status', status: 'working', reason: 'connected', patch: { phoneNumber, waJid: jid, waLid: lid, lastConnectedAt: new Date(ctx.now) } } as const;
    const opened: SessionState = { ...state, phase: 'open', qrShown: 0, codeRequestedOn: null, codeDropped: null, failedConnects: 0, restartsInARow: 0, openedSinceStart: true };
    return {
      state: withStatus(opened, status),
      effects: [
        { kind: 'clear_qr' },
        status,
        { kind: 'publish', event: { event: 'session.connected', payload: { phoneNumber, waJid: jid, waLid: lid } } },
        { kind: 'drain_sends' },
      ],
    };
  },
  close: (state, input, ctx) => {
    if (input.reason === 'closed_by_us') return same(state);
    const typing = state.codeRequestedOn === input.gen;
    const next = { ...state, codeRequestedOn: null };
    const disconnected: SessionEffect[] =
      state.status === 'working'
        ? [{ kind: 'publish', event: { event: 'session.disconnected', payload: { reason: input.reason, statusCode: input.statusCode, message: input.message } } }]
        : [];
    const after = closeHandlers[input.reason](next, input, ctx, typing);
    return { state: after.state, effects: [...disconnected, ...after.effects] };
  },
};

/** The one place a session's state changes. Pure: the same state, input and context give the same result. */
export function transition(state: SessionState, input: SessionInput, ctx: TransitionContext): Transition {
  return take(input.kind, input, state, ctx);
}

function take<K extends SessionInputKind>(kind: K, input: InputOf[K], state: SessionState, ctx: TransitionContext): Transition {
  const handler: Handler<K> = handlers[kind];
  return handler(state, input, ctx);
}
