import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, credentials, whenUnauthorized, type Me } from './api';
import { live, type LiveState } from './live';
import { MeContext } from './me';
import { go, useRoute } from './router';
import { AcceptInvitationPage, ResetPasswordPage } from './screens/account';
import { CampaignsScreen } from './screens/campaigns';
import { EventSinkDetail } from './screens/event-sinks';
import { EventMonitor } from './screens/events';
import { GatewaysScreen } from './screens/gateways';
import { GroupScreen } from './screens/group';
import { InboxScreen } from './screens/inbox';
import { Login } from './screens/login';
import { OrganizationScreen } from './screens/organization';
import { OverviewScreen } from './screens/overview';
import { SessionDetail, SessionsScreen } from './screens/sessions';
import { WebhookDetail, WebhooksScreen } from './screens/webhooks';
import './styles.css';

const NAV = [
  ['overview', 'Overview'],
  ['sessions', 'Sessions'],
  ['campaigns', 'Campaigns'],
  ['webhooks', 'Webhooks'],
  ['events', 'Events'],
  ['gateways', 'Gateways'],
  ['organization', 'Organization'],
] as const;

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(false);
  const [liveState, setLiveState] = useState<LiveState>(live.state);
  const route = useRoute();

  const signIn = async () => {
    setMe(await api.me());
    live.start();
    if (!location.hash || location.hash === '#/') go('overview');
  };
  const signOut = () => {
    credentials.clear();
    live.stop();
    setMe(null);
  };

  useEffect(() => {
    whenUnauthorized(signOut);
    const off = live.onState(setLiveState);
    if (credentials.get()) signIn().catch(signOut).finally(() => setChecked(true));
    else setChecked(true);
    return off;
  }, []);

  // the links the API mails (an invitation, a password reset) open these without a sign-in
  const publicPage = location.pathname.replace(/^\/dashboard\/?/, '');
  if (publicPage === 'accept-invitation') return <AcceptInvitationPage onSignedIn={signIn} />;
  if (publicPage === 'reset-password') return <ResetPasswordPage />;
  if (!checked) return null;
  if (!me) return <Login onSignedIn={signIn} />;

  const shell = (
    <div class="shell">
      <TopNav screen={route[0] ?? 'overview'} me={me} liveState={liveState} signOut={signOut} />
      <main>
        <Screen route={route} />
      </main>
    </div>
  );
  return <MeContext.Provider value={me}>{shell}</MeContext.Provider>;
}

function TopNav({ screen, me, liveState, signOut }: { screen: string; me: Me; liveState: LiveState; signOut: () => void }) {
  return (
    <nav class="top">
      <strong class="brand">Messaging Gateway</strong>
      {NAV.map(([path, label]) => (
        <a href={`#/${path}`} class={screen === path ? 'current' : ''}>{label}</a>
      ))}
      <span class="spacer" />
      <span class={`live live-${liveState}`} title="the realtime WebSocket" data-live={liveState}>● {liveState === 'open' ? 'live' : liveState}</span>
      <span class="muted">{me.kind === 'user' ? `${me.role} · ${me.organizationId}` : `API key · ${me.organizationId}`}</span>
      <button type="button" onClick={signOut}>Sign out</button>
    </nav>
  );
}

/** The screen the route names (`#/<screen>/<id>/<sub>/<arg>`). */
function Screen({ route }: { route: string[] }) {
  const [screen = 'overview', id, sub, arg] = route;
  return (
    <>
      {screen === 'overview' && <OverviewScreen />}
      {screen === 'sessions' && !id && <SessionsScreen />}
      {screen === 'sessions' && id && !sub && <SessionDetail id={id} key={id} />}
      {screen === 'sessions' && id && sub === 'inbox' && <InboxScreen sessionId={id} chatJid={arg ?? null} key={id} />}
      {screen === 'sessions' && id && sub === 'groups' && arg && <GroupScreen sessionId={id} groupJid={arg} key={arg} />}
      {screen === 'webhooks' && !id && <WebhooksScreen />}
      {screen === 'webhooks' && id && <WebhookDetail id={id} key={id} />}
      {screen === 'events' && <EventMonitor />}
      {screen === 'gateways' && <GatewaysScreen />}
      {screen === 'event-sinks' && id && <EventSinkDetail id={id} key={id} />}
      {screen === 'campaigns' && <CampaignsScreen sessionId={id} campaignId={sub} />}
      {screen === 'organization' && <OrganizationScreen tab={id} />}
    </>
  );
}

render(<App />, document.getElementById('app')!);
