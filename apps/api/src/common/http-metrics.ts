import { Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Histogram, Registry } from 'prom-client';
import { metricName, MetricsRegistry } from '@app/infra';

/** Set on a request by `timeRequest`: only the requests it marks are timed (the series it always had). */
const TIMED = Symbol('timed');

type TimedRequest = IncomingMessage & { [TIMED]?: true; route?: { path?: string }; baseUrl?: string };

/** The API's own series, on the process's shared registry. */
@Injectable()
export class ApiMetrics {
  readonly registry: Registry;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** One resolved child per (method, route template, status): a bounded set, looked up once per request. */
  private readonly durationByLabels = new Map<string, Histogram.Internal<'method' | 'route' | 'status'>>();

  constructor(shared: MetricsRegistry) {
    this.registry = shared.registry;
    this.httpDuration = new Histogram({
      name: metricName('http_request_duration_seconds'),
      help: 'HTTP requests by route template, method and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
  }

  /**
   * A request is done (the request log's one 'close' listener calls this): a timed request whose answer was sent
   * is observed; the label is the matched route template (never the raw URL, to bound cardinality).
   */
  readonly requestDone = (req: TimedRequest, res: ServerResponse, seconds: number): void => {
    if (!req[TIMED] || !res.writableFinished) return;
    const route = req.route?.path ? `${req.baseUrl ?? ''}${req.route.path}` : 'unmatched';
    const method = req.method ?? '';
    const status = String(res.statusCode);
    const key = `${method} ${route} ${status}`;
    let child = this.durationByLabels.get(key);
    if (!child) {
      child = this.httpDuration.labels(method, route, status);
      this.durationByLabels.set(key, child);
    }
    child.observe(seconds);
  };
}

/**
 * Marks a request the duration histogram counts (every route of ours, /healthz and /readyz; the API's prelude calls
 * it): the timing itself is the request log's (`requestLogger(…, metrics.requestDone)`), which already holds the
 * start and a 'close' listener.
 */
export function timeRequest(req: IncomingMessage): void {
  (req as TimedRequest)[TIMED] = true;
}
