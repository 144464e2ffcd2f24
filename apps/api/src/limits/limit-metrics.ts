import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import type { DomainError } from '@app/contracts';
import { metricName, MetricsRegistry } from '@app/infra';
import { RateLimitName, rateLimited } from './rate-limited';

export type { RateLimitName } from './rate-limited';

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

  /** The 429 of a request refused by `limit`, counted: every refusal of the API's limits goes through here. */
  refused(limit: RateLimitName, retryAfterMs: number): DomainError {
    this.refusals.inc({ limit });
    return rateLimited(limit, retryAfterMs);
  }
}
