import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';
import { live } from './live';

export function message(err: unknown): string {
  return err instanceof ApiError ? err.describe() : String((err as Error)?.message ?? err);
}

/** Loads once, again on `reload()`, and again when the live socket reconnects (it is live-only). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  // the caller's deps, not `load`'s identity (a new closure each render), decide when it loads again
  const reload = useCallback(() => load().then((d) => (setData(d), setError(null)), (e) => setError(message(e))), deps);
  useEffect(() => {
    reload();
    return live.onReconnect(reload);
  }, [reload]);
  return { data, setData, error, reload };
}

/** What `useLoad` gives a component that shows (and changes) the loaded data. */
export type Loaded<T> = ReturnType<typeof useLoad<T>>;

/** What `useAction` gives a component whose buttons run (and wait for) the same action. */
export type Action = ReturnType<typeof useAction>;

/** Runs a user action, showing its failure where the user looks. */
export function useAction() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

/** `1 attempt`, `2 attempts`: a count with its noun, in English's two forms. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export const Status = ({ value }: { value: string }) => <span class={`badge badge-${value}`} data-status={value}>{value.replace(/_/g, ' ')}</span>;

export const ErrorLine = ({ error }: { error: string | null }) => (error ? <p class="error" role="alert">{error}</p> : null);

export const When = ({ at }: { at: number | null | undefined }) =>
  at ? <time dateTime={new Date(at).toISOString()} title={new Date(at).toISOString()}>{new Date(at).toLocaleString()}</time> : <span class="muted">—</span>;

export const Panel = ({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) => (
  <section class="panel">
    <header>
      <h2>{title}</h2>
      {actions ? <div class="actions">{actions}</div> : null}
    </header>
    {children}
  </section>
);

/** A one-line form whose submit runs `submit` as `action` (busy state, the failure shown under it). */
export function ActionForm({ action, submit, children }: { action: ReturnType<typeof useAction>; submit: () => Promise<unknown>; children: ComponentChildren }) {
  return (
    <form
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        action.run(submit);
      }}
    >
      {children}
      <ErrorLine error={action.error} />
    </form>
  );
}

/** Copies `value` to the clipboard; says "Copied" once it did. */
export function CopyButton({ value }: { value: string }) {
  const [copied, setCopied] = useState(false);
  return <button type="button" onClick={() => navigator.clipboard?.writeText(value).then(() => setCopied(true), () => undefined)}>{copied ? 'Copied' : 'Copy'}</button>;
}

/** A secret the API answers once (an API key, an invitation or reset link): shown with Copy until dismissed. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div class="shown-once" role="status" data-shown-once={label}>
      <p><strong>{label}</strong> — shown only now: copy it before closing.</p>
      <input class="mono" readOnly value={value} onFocus={(e) => e.currentTarget.select()} aria-label={label} />
      <div class="actions">
        <CopyButton value={value} />
        <button type="button" onClick={onDone}>Done</button>
      </div>
    </div>
  );
}

/** `2026-01-05T10:00:00.000Z` as the reader's local time (the organization endpoints answer ISO strings). */
export const WhenIso = ({ at }: { at: string | null | undefined }) => <When at={at ? Date.parse(at) : null} />;
