import { useState } from 'preact/hooks';
import { api, credentials } from '../api';
import { ErrorLine, Panel, useAction } from '../ui';

/**
 * A person's own password, and the two pages the API's links open without a sign-in
 * (`/dashboard/accept-invitation?token=…`, `/dashboard/reset-password?token=…`, docs/auth.md). Whether the new
 * password is good enough is the API's to say (its 422 is shown); the pages only check that both entries match.
 */

function usePasswordPair() {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const fields = (
    <>
      <label>New password <input name="newPassword" type="password" autoComplete="new-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></label>
      <label>New password again <input name="newPasswordAgain" type="password" autoComplete="new-password" required value={again} onInput={(e) => setAgain(e.currentTarget.value)} /></label>
    </>
  );
  /** The password, or a thrown error when the two entries differ (nothing is sent then). */
  const value = () => {
    if (password !== again) throw new Error('The two new passwords differ.');
    return password;
  };
  return { fields, value };
}

/** `POST /auth/password`: every other sign-in of this person ends; this tab carries on with the token answered. */
export function ChangePassword() {
  const [current, setCurrent] = useState('');
  const pair = usePasswordPair();
  const [done, setDone] = useState(false);
  const { error, busy, run } = useAction();
  return (
    <Panel title="Change your password">
      <form
        class="grid-form"
        aria-label="Change password"
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          run(async () => {
            const next = pair.value();
            credentials.set((await api.changePassword(current, next)).accessToken);
            setCurrent('');
            setDone(true);
          });
        }}
      >
        <label>Current password <input name="currentPassword" type="password" autoComplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} /></label>
        {pair.fields}
        <div class="wide">
          <ErrorLine error={error} />
          {done && <p class="ok">Password changed. Your other sign-ins have ended; this one goes on.</p>}
          <button type="submit" class="primary" disabled={busy}>Change password</button>
        </div>
      </form>
    </Panel>
  );
}

const tokenInUrl = () => new URLSearchParams(location.search).get('token') ?? '';

/** Leaves a token page for the app (the token out of the address bar and the history). */
const leave = (hash: string) => history.replaceState(null, '', `/dashboard/${hash}`);

/** The invitation link: the invitee picks a password (and a name) and is signed in as the new member. */
export function AcceptInvitationPage({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [name, setName] = useState('');
  const pair = usePasswordPair();
  const { error, busy, run } = useAction();
  const token = tokenInUrl();
  return (
    <div class="public-page">
      <form
        class="panel"
        aria-label="Accept invitation"
        onSubmit={(e) => {
          e.preventDefault();
          run(async () => {
            const { accessToken } = await api.acceptInvitation(token, pair.value(), name.trim() || undefined);
            credentials.set(accessToken);
            leave('#/overview');
            await onSignedIn();
          });
        }}
      >
        <h1>Join the organization</h1>
        {!token && <p class="error">This page needs the link from your invitation (it carries a token).</p>}
        <label>Your name (optional) <input name="name" autoComplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        {pair.fields}
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy || !token}>Accept and sign in</button>
        <a href="/dashboard/">Already a member? Sign in</a>
      </form>
    </div>
  );
}

/**
 * The reset link sets a new password (then the person signs in). Without a token it is the "forgot my password" page:
 * the API has no public reset request (an address could be probed with it, and not every installation sends mail), so
 * it says who can make a link: an owner or admin, on Organization → Members.
 */
export function ResetPasswordPage() {
  const pair = usePasswordPair();
  const [done, setDone] = useState(false);
  const { error, busy, run } = useAction();
  const token = tokenInUrl();
  if (!token) {
    return (
      <div class="public-page">
        <section class="panel" aria-label="Forgot password">
          <h1>Forgot your password?</h1>
          <p>Ask an owner or an admin of your organization for a reset link: in the dashboard, <strong>Organization → Members → Reset password</strong> beside your name. The link works once, for an hour; it is mailed to you when the server sends mail.</p>
          <p>An API key cannot be recovered: ask for a new one and have the old one revoked.</p>
          <a href="/dashboard/">Back to sign in</a>
        </section>
      </div>
    );
  }
  return (
    <div class="public-page">
      <form
        class="panel"
        aria-label="Reset password"
        onSubmit={(e) => {
          e.preventDefault();
          run(async () => {
            await api.resetPassword(token, pair.value());
            setDone(true);
          });
        }}
      >
        <h1>Choose a new password</h1>
        {done ? (
          <>
            <p class="ok">Password changed. Every earlier sign-in of yours has ended.</p>
            <a href="/dashboard/">Sign in</a>
          </>
        ) : (
          <>
            {pair.fields}
            <ErrorLine error={error} />
            <button type="submit" class="primary" disabled={busy}>Set password</button>
          </>
        )}
      </form>
    </div>
  );
}
