import { Counter, Gauge } from 'prom-client';
import { MetricsRegistry } from '@app/infra';

/** The gateway's own series, on the process's shared registry (served on GATEWAY_HEALTH_PORT /metrics). */
export class GatewayMetrics {
  readonly sessions: Gauge;
  readonly commands: Counter<'name' | 'outcome'>;

  constructor(shared: MetricsRegistry) {
    this.sessions = new Gauge({ name: 'gateway_sessions', help: 'sessions holding or seeking a socket on this gateway', registers: [shared.registry] });
    this.commands = new Counter({
      name: 'gateway_commands_total',
      help: 'commands handled, by name and outcome',
      labelNames: ['name', 'outcome'],
      registers: [shared.registry],
    });
  }
}
