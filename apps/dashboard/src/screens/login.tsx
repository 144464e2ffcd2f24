import { useState } from 'preact/hooks';
import { api, credentials } from '../api';
import { ErrorLine, useAction } from '../ui';

/** Email + password (a login JWT) or a pasted API key; either is kept in sessionStorage as the bearer token. */
export function Login({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [mode, setMode] = useState<'password' | 'key'>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const { error, busy, run } = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      if (mode === 'password') credentials.set((await api.login(email.trim(), password)).accessToken);
      else credentials.set(key.trim());
      try {
        await onSignedIn();
      } catch (err) {
        credentials.clear();
        throw err;
      }
    });
  };

  return (
    <div class="login">
      <form class="panel" onSubmit={submit} aria-label="Sign in">
        <h1>Messaging Gateway</h1>
        <div class="tabs">
          <button type="button" class={mode === 'password' ? 'current' : ''} onClick={() => setMode('password')}>Email and password</button>
          <button type="button" class={mode === 'key' ? 'current' : ''} onClick={() => setMode('key')}>API key</button>
        </div>
        {mode === 'password' ? (
          <>
            <label>Email <input name="email" type="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
            <label>Password <input name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></label>
          </>
        ) : (
          <label>API key <input name="apiKey" type="password" autoComplete="off" spellcheck={false} placeholder="gwk_…" required value={key} onInput={(e) => setKey(e.currentTarget.value)} /></label>
        )}
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>Sign in</button>
        {mode === 'password' && <a href="/dashboard/reset-password">Forgot your password?</a>}
      </form>
    </div>
  );
}
