import { collectDefaultMetrics, Registry } from 'prom-client';

/** Every series of every process starts with it, so one `{__name__=~"gw_.*"}` finds the product's and nothing else. */
export const METRIC_PREFIX = 'gw_';

/**
 * The process's one Prometheus registry, with Node's default metrics (prefixed too). Each app registers its own
 * series on it (`registers: [metrics.registry]`, names from `metricName`) and serves it on its ops port. Every series
 * carries `app` (api, gateway, webhook-dispatcher), so processes sharing a scrape job stay apart.
 */
export class MetricsRegistry {
  readonly registry = new Registry();

  constructor(defaultLabels: Record<string, string> = {}) {
    this.registry.setDefaultLabels(defaultLabels);
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
  }
}

/** `gw_<name>`: the one place the prefix is applied. */
export const metricName = (name: string): string => `${METRIC_PREFIX}${name}`;
