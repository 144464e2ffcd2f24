import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Histogram, Registry } from 'prom-client';
import { metricName, MetricsRegistry } from '@app/infra';

/** The API's own series, on the process's shared registry. */
@Injectable()
export class ApiMetrics {
  readonly registry: Registry;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;

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
}

/** Times every request; the label is the matched route template (never the raw URL, to bound cardinality). */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: ApiMetrics) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const end = this.metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl ?? ''}${req.route.path}` : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  }
}
