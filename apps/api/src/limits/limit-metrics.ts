import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { metricName, MetricsRegistry } from '@app/infra';

/** Names of the API's rate limits, as they appear in `details.limit` and the metric's `limit` label. */
export type RateLimitName = 'ip' | 'credential' | 'login_ip' | 'login_account' | 'login_account_ceiling';

@Injectable()
export class LimitMetrics {
  readonly refusals: Counter<'limit'>;

  constructor(shared: MetricsRegistry) {
    this.refusals = new Counter({
      name: metricName('api_rate_limited_total'),
      help: 'Requests refused with 429 rate_limited, by limit',
      labelNames: ['limit'] as const,
      registers: [shared.registry],
    });
  }
}
