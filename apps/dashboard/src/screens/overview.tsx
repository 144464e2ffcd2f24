import { SESSION_STATUSES } from '@app/contracts';
import { useEffect, useMemo } from 'preact/hooks';
import { api, type Overview } from '../api';
import { live } from '../live';
import { ErrorLine, Panel, plural, Status, useLoad, When } from '../ui';
import { HourlyChart, type HourlySeries } from './time-chart';

/** Delivery outcomes live in the dispatcher, which the socket does not carry: the figures are also read this often. */
const REFRESH_MS = 30_000;
/** Events come in bursts: one read of the figures per burst, at most this often. */
const EVENT_COALESCE_MS = 1000;

/**
 * The organization at a glance (`GET /stats/overview`): sessions by status, messages and webhook deliveries per hour
 * over the last 24 hours, the webhooks failing now. Read again after the events that change them (coalesced) and
 * every 30 s.
 */
export function OverviewScreen() {
  const { data, error, reload } = useLoad(() => api.overview());
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    let pending: ReturnType<typeof setTimeout> | undefined;
    const off = live.subscribe((e) => {
      if (!/^(session|message|webhook)\./.test(e.event) || pending) return;
      pending = setTimeout(() => {
        pending = undefined;
        reload();
      }, EVENT_COALESCE_MS);
    });
    return () => {
      clearInterval(timer);
      clearTimeout(pending);
      off();
    };
  }, [reload]);

  if (!data) return error ? <ErrorLine error={error} /> : <p class="muted">Loading…</p>;
  return (
    <div class="overview" data-testid="overview" data-generated-at={data.generatedAt}>
      <ErrorLine error={error} />
      <SessionsByStatus overview={data} />
      <MessagesChart overview={data} />
      {data.deliveries && <DeliveriesChart overview={data} />}
      {data.failingWebhooks && <FailingWebhooks overview={data} />}
    </div>
  );
}

function SessionsByStatus({ overview }: { overview: Overview }) {
  const { total, byStatus } = overview.sessions;
  return (
    <Panel title="Sessions" actions={<a href="#/sessions">{plural(total, 'session')}</a>}>
      <ul class="tiles">
        {SESSION_STATUSES.map((status) => (
          <li class={byStatus[status] ? '' : 'none'} data-count-status={status} data-count={byStatus[status]}>
            <strong>{byStatus[status]}</strong>
            <Status value={status} />
          </li>
        ))}
      </ul>
    </Panel>
  );
}

function MessagesChart({ overview }: { overview: Overview }) {
  const hours = useMemo(() => overview.messages.map((h) => h.hour), [overview]);
  const series = useMemo<HourlySeries[]>(
    () => [
      { label: 'received', color: '#3a7bd5', kind: 'bars', values: overview.messages.map((h) => h.received) },
      { label: 'sent', color: '#3aa57a', kind: 'bars', values: overview.messages.map((h) => h.sent) },
    ],
    [overview],
  );
  const received = overview.messages.reduce((n, h) => n + h.received, 0);
  const sent = overview.messages.reduce((n, h) => n + h.sent, 0);
  return (
    <Panel title="Messages, last 24 hours">
      <figure class="chart" data-messages-received={received} data-messages-sent={sent}>
        <HourlyChart hours={hours} series={series} />
        <figcaption>
          {plural(received, 'message')} received, {sent} sent; per hour of arrival (received) or acceptance (sent).
        </figcaption>
      </figure>
    </Panel>
  );
}

function DeliveriesChart({ overview }: { overview: Overview }) {
  const deliveries = overview.deliveries!;
  const hours = useMemo(() => deliveries.map((h) => h.hour), [overview]);
  const series = useMemo<HourlySeries[]>(
    () => [
      { label: 'delivered', color: '#3aa57a', kind: 'bars', values: deliveries.map((h) => h.delivered) },
      { label: 'failed', color: '#d9534f', kind: 'bars', values: deliveries.map((h) => h.failed) },
      { label: 'p95 latency (ms)', color: '#b7791f', kind: 'line', values: deliveries.map((h) => h.p95LatencyMs) },
    ],
    [overview],
  );
  const delivered = deliveries.reduce((n, h) => n + h.delivered, 0);
  const failed = deliveries.reduce((n, h) => n + h.failed, 0);
  const latest = [...deliveries].reverse().find((h) => h.p95LatencyMs !== null);
  return (
    <Panel title="Webhook deliveries, last 24 hours" actions={<a href="#/webhooks">Webhooks</a>}>
      <figure class="chart" data-deliveries-delivered={delivered} data-deliveries-failed={failed}>
        <HourlyChart hours={hours} series={series} />
        <figcaption>
          {plural(delivered, 'delivery', 'deliveries')} succeeded, {failed} failed
          {delivered + failed > 0 && ` (${Math.round((100 * delivered) / (delivered + failed))}% success)`}
          {latest && `; p95 latency ${latest.p95LatencyMs} ms in the latest hour with deliveries`}. Latency: event stored → the receiver's 2xx.
        </figcaption>
      </figure>
    </Panel>
  );
}

function FailingWebhooks({ overview }: { overview: Overview }) {
  const failing = overview.failingWebhooks!;
  return (
    <Panel title="Webhooks failing now">
      <table class="list" data-testid="failing-webhooks">
        <thead><tr><th>Webhook</th><th>Failing since</th><th>Last error</th></tr></thead>
        <tbody>
          {failing.map((w) => (
            <tr key={w.id} data-failing-webhook={w.id}>
              <td><a href={`#/webhooks/${w.id}`}>{w.url}</a>{w.disabledAt !== null && <div class="bad-text">disabled by the breaker: re-enable it to resume</div>}</td>
              <td><When at={w.failingSince ?? w.disabledAt} /></td>
              <td>
                {w.lastStatusCode !== null && <span class="mono">{w.lastStatusCode} </span>}
                {w.lastError ?? <span class="muted">—</span>}
                {w.lastFailedAt !== null && <div class="muted"><When at={w.lastFailedAt} /></div>}
              </td>
            </tr>
          ))}
          {!failing.length && <tr><td colSpan={3} class="muted">No webhook is failing.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}
