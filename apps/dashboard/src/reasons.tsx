import { useEffect, useState } from 'preact/hooks';
import type { SessionView } from './api';
import { live } from './live';
import { explainReason, isExplained } from './reason-hints';

type ReasonedSession = Pick<SessionView, 'id' | 'status' | 'statusReason' | 'nextAttemptAt'>;

/** The view's reason in the form explainReason reads: `…; next attempt at <ISO time>` while a retry is scheduled. */
const reasonOf = (s: ReasonedSession): string | null =>
  s.statusReason && s.nextAttemptAt !== null ? `${s.statusReason}; next attempt at ${new Date(s.nextAttemptAt).toISOString()}` : s.statusReason;

/**
 * The reason of a session's current status: the Session view's `statusReason` and `nextAttemptAt` (docs/sessions.md),
 * then each `session.status` event's new one (without the next attempt's time), kept live.
 */
export function useSessionReason(session: ReasonedSession): string | null {
  const shown = reasonOf(session);
  const [reason, setReason] = useState<string | null>(shown);
  const explained = isExplained(session.status, shown);
  useEffect(() => {
    setReason(shown);
    if (!explained) return;
    return live.subscribe((e) => {
      if (e.event !== 'session.status' || e.sessionId !== session.id) return;
      const next = (e.payload as { reason?: unknown }).reason;
      if (typeof next === 'string') setReason((prev) => (prev && prev.startsWith(`${next}; next attempt at `) ? prev : next));
    });
  }, [session.id, session.status, shown, explained]);
  return explained ? reason : null;
}

/** The reason and the hint, compact (the list) or in full (the session page). */
export function Reason({ session, compact = false }: { session: ReasonedSession; compact?: boolean }) {
  const raw = useSessionReason(session);
  if (!raw) return null;
  const { reason, nextAttemptAt, hint } = explainReason(raw, session.status);
  return (
    <div class={compact ? 'reason compact' : 'reason'} data-reason={reason}>
      <span class="mono">{reason}</span>
      {nextAttemptAt && (
        <span class="muted">
          {' '}· next attempt <time dateTime={nextAttemptAt}>{new Date(nextAttemptAt).toLocaleTimeString()}</time>
        </span>
      )}
      <div class="hint" data-hint>{hint}</div>
    </div>
  );
}
