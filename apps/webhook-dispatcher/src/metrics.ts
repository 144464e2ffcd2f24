import { Counter, Gauge, Histogram } from 'prom-client';
import { metricName, type MetricsRegistry } from '@app/infra';

export interface MetricSources {
  /** jobs waiting, delayed or active in the delivery queue */
  queueDepth: () => Promise<Record<string, number>>;
  /** deliveries given up (dead-lettered) in PostgreSQL */
  deadCount: () => Promise<number>;
}

/**
 * The dispatcher's Prometheus series, on the process's shared registry (served on DISPATCHER_HEALTH_PORT /metrics,
 * every series labelled app="webhook-dispatcher" by InfraModule).
 */
export class DispatcherMetrics {
  readonly outcomes: Counter<'outcome'>;
  readonly attemptSeconds: Histogram<'outcome'>;
  readonly eventToDeliverySeconds: Histogram;
  readonly fannedOut: Counter;

  constructor(shared: MetricsRegistry, sources: MetricSources) {
    const registry = shared.registry;
    this.outcomes = new Counter({
      name: metricName('webhook_deliveries_total'),
      help: 'Delivery attempts by outcome: delivered (2xx), retry (failed, another attempt scheduled), dead (last attempt failed), refused (SSRF guard); postponed / parked: handed back without a POST (breaker open, webhook share busy / webhook disabled)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.attemptSeconds = new Histogram({
      name: metricName('webhook_attempt_duration_seconds'),
      help: 'Duration of one delivery POST, connect to end of answer, by outcome (success: 2xx, failure: anything else)',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    });
    this.eventToDeliverySeconds = new Histogram({
      name: metricName('webhook_event_to_delivery_seconds'),
      help: 'From the event envelope timestamp to the receiver answering 2xx',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
      registers: [registry],
    });
    this.fannedOut = new Counter({
      name: metricName('webhook_deliveries_created_total'),
      help: 'Delivery records created by the fan-out of events to matching webhooks',
      registers: [registry],
    });
    new Gauge({
      name: metricName('webhook_delivery_queue_depth'),
      help: 'Jobs in the delivery queue by state',
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        const counts = await sources.queueDepth();
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      },
    });
    new Gauge({
      name: metricName('webhook_dead_deliveries'),
      help: 'Deliveries given up after their last attempt (dead-lettered), replayable through the API',
      registers: [registry],
      async collect() {
        this.set(await sources.deadCount());
      },
    });
  }
}
