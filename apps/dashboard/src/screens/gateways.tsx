import { useEffect } from 'preact/hooks';
import { api } from '../api';
import { ErrorLine, Panel, useLoad, When } from '../ui';

const REFRESH_MS = 5000;

/** The operator's view of the fleet: every gateway node, its heartbeat and how full it is. */
export function GatewaysScreen() {
  const { data, error, reload } = useLoad(() => api.gateways().then((r) => r.data));
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  const gateways = data ?? [];
  return (
    <Panel title="Gateways" actions={<button onClick={reload}>Refresh</button>}>
      <ErrorLine error={error} />
      <table class="list" data-testid="gateways">
        <thead><tr><th>Gateway</th><th>State</th><th>Sessions</th><th>Engine</th><th>Version</th><th>Started</th><th>Last heartbeat</th></tr></thead>
        <tbody>
          {gateways.map((g) => (
            <tr key={g.id} data-gateway-id={g.id}>
              <td class="mono">{g.id}</td>
              <td><span class={`badge badge-${g.alive ? 'working' : 'failed'}`}>{g.alive ? 'alive' : 'silent'}</span></td>
              <td>
                <meter min={0} max={g.capacity} value={g.sessionCount} /> {g.sessionCount} / {g.capacity}
              </td>
              <td>{g.engine}</td>
              <td>{g.version}</td>
              <td><When at={g.startedAt} /></td>
              <td><When at={g.lastHeartbeatAt} /></td>
            </tr>
          ))}
          {data && !gateways.length && <tr><td colSpan={7} class="muted">No gateway has registered.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}
