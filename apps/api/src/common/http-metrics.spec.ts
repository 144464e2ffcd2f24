import { MetricsRegistry } from '@app/infra';
import { ApiMetrics, timeRequest } from './http-metrics';

/** What `gw_http_request_duration_seconds` holds, series by series: `count` per label set. */
async function counts(metrics: ApiMetrics): Promise<Record<string, number>> {
  const { values } = await metrics.httpDuration.get();
  return Object.fromEntries(
    values.filter((v) => v.metricName?.endsWith('_count')).map((v) => [`${v.labels.method} ${v.labels.route} ${v.labels.status}`, v.value]),
  );
}

describe('ApiMetrics.requestDone (the request duration histogram)', () => {
  const mark = (req: object) => timeRequest(req as never);

  it('observes the requests marked timed whose answer was sent, by route template, and nothing else', async () => {
    const metrics = new ApiMetrics(new MetricsRegistry());
    const routed = { method: 'GET', route: { path: '/webhooks/:id' }, baseUrl: '/api/v1' };
    mark(routed);
    metrics.requestDone(routed as never, { statusCode: 200, writableFinished: true } as never, 0.003);
    metrics.requestDone(routed as never, { statusCode: 200, writableFinished: true } as never, 0.2);
    const unmatched = { method: 'GET' };
    mark(unmatched);
    metrics.requestDone(unmatched as never, { statusCode: 404, writableFinished: true } as never, 0.001);
    // refused before the mark (input hardening, a body that does not parse): not a series, as before
    metrics.requestDone({ method: 'POST' } as never, { statusCode: 422, writableFinished: true } as never, 0.001);
    // the client went away before the answer was complete: never finished, not observed
    const aborted = { method: 'GET', route: { path: '/x' }, baseUrl: '' };
    mark(aborted);
    metrics.requestDone(aborted as never, { statusCode: 200, writableFinished: false } as never, 1);
    expect(await counts(metrics)).toEqual({ 'GET /api/v1/webhooks/:id 200': 2, 'GET unmatched 404': 1 });
    const { values } = await metrics.httpDuration.get();
    expect(values.find((v) => v.metricName?.endsWith('_sum') && v.labels.status === '200')?.value).toBeCloseTo(0.203);
    expect(values.find((v) => v.metricName?.endsWith('_bucket') && v.labels.status === '200' && (v.labels as Record<string, unknown>).le === 0.005)?.value).toBe(1);
  });
});
