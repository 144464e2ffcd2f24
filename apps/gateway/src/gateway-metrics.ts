import { Counter, Gauge, Histogram } from 'prom-client';
import { metricName, MetricsRegistry } from '@app/infra';

/** Why a session changed gateway (the `reason` of its `session.status` event). */
export type SessionMoveReason = 'failover' | 'drain' | 'rebalance';

/** The gateway's own series, on the process's shared registry (served on GATEWAY_HEALTH_PORT /metrics). */
export class GatewayMetrics {
  readonly sessions: Gauge;
  readonly commands: Counter<'name' | 'outcome'>;
  /** moves this process made, counted on both ends: `gateway` is the source (out) or the target (in) */
  readonly movesOut: Counter<'gateway' | 'reason'>;
  readonly movesIn: Counter<'gateway' | 'reason'>;
  /** from a dead gateway's last heartbeat to the session `working` on its new gateway (observed by the leader) */
  readonly failoverSeconds: Histogram;
  readonly supervisorLeader: Gauge;
  /** connects WhatsApp refused for this client's WhatsApp Web version (405) */
  readonly clientVersionRefused: Counter;

  constructor(shared: MetricsRegistry) {
    const registers = [shared.registry];
    this.sessions = new Gauge({ name: metricName('gateway_sessions'), help: 'sessions holding or seeking a socket on this gateway', registers });
    this.commands = new Counter({ name: metricName('gateway_commands_total'), help: 'commands handled, by name and outcome', labelNames: ['name', 'outcome'], registers });
    this.movesOut = new Counter({
      name: metricName('gateway_session_moves_out_total'),
      help: 'sessions moved off a gateway, by source gateway and reason (failover, drain, rebalance)',
      labelNames: ['gateway', 'reason'],
      registers,
    });
    this.movesIn = new Counter({
      name: metricName('gateway_session_moves_in_total'),
      help: 'sessions moved onto a gateway, by target gateway and reason (failover, drain, rebalance)',
      labelNames: ['gateway', 'reason'],
      registers,
    });
    this.failoverSeconds = new Histogram({
      name: metricName('gateway_failover_duration_seconds'),
      help: "from a dead gateway's last heartbeat to each of its sessions working on its new gateway",
      buckets: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 30, 60],
      registers,
    });
    this.supervisorLeader = new Gauge({ name: metricName('gateway_supervisor_leader'), help: '1 while this gateway leads the fleet supervisor', registers });
    this.clientVersionRefused = new Counter({
      name: metricName('gateway_client_version_refused_total'),
      help: "connects WhatsApp refused for this client's WhatsApp Web version (405): update WHATSAPP_WEB_VERSION or allow the version fetch",
      registers,
    });
  }

  recordMove(reason: SessionMoveReason, from: string, to: string): void {
    this.movesOut.inc({ gateway: from, reason });
    this.movesIn.inc({ gateway: to, reason });
  }

  observeFailover(seconds: number): void {
    this.failoverSeconds.observe(seconds);
  }

  setLeader(leading: boolean): void {
    this.supervisorLeader.set(leading ? 1 : 0);
  }
}
