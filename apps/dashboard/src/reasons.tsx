import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, type SessionView } from './api';
import { live } from './live';
import { EXPLAINED_STATUSES, explainReason } from './reason-hints';

/**
 * The reason of a session's current status. The Session view has no reason field (its fields are the seed's); the API
 * says it in `GET /sessions/{id}/qr`'s 409 (`details.reason`, docs/sessions.md), and each `session.status` event
 * carries the new one (without the next attempt's time), so it is read once per status and then kept live.
 */
export function useSessionReason(session: Pick<SessionView, 'id' | 'status'>): string | null {
  const [reason, setReason] = useState<string | null>(null);
  const explained = EXPLAINED_STATUSES.includes(session.status);
  useEffect(() => {
    setReason(null);
    if (!explained) return;
    let cancelled = false;
    // a session not waiting for a scan answers 409 with its reason; a PNG means it moved on to scan_qr_code meanwhile
    api.qrImage(session.id).then(
      () => undefined,
      (err) => {
        if (!cancelled && err instanceof ApiError && typeof err.details.reason === 'string') setReason(err.details.reason);
      },
    );
    const off = live.subscribe((e) => {
      if (e.event !== 'session.status' || e.sessionId !== session.id) return;
      const next = (e.payload as { reason?: unknown }).reason;
      if (typeof next === 'string') setReason((prev) => (prev && prev.startsWith(`${next}; next attempt at `) ? prev : next));
    });
    return () => {
      cancelled = true;
      off();
    };
  }, [session.id, session.status, explained]);
  return explained ? reason : null;
}

/** The reason and the hint, compact (the list) or in full (the session page). */
export function Reason({ session, compact = false }: { session: Pick<SessionView, 'id' | 'status'>; compact?: boolean }) {
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
