import { Counter, Gauge, Histogram } from 'prom-client';
import { metricName, MetricsRegistry } from '@app/infra';
import type { InboundSpool, InboundSpoolMetrics } from '@app/messaging';
import type { HeldReceiptsMetrics } from './engine/baileys/held-receipts';

/** Why a session changed gateway (the `reason` of its `session.status` event). */
export type SessionMoveReason = 'failover' | 'drain' | 'rebalance';

/** The gateway's own series, on the process's shared registry (served on GATEWAY_HEALTH_PORT /metrics). */
export class GatewayMetrics {
  readonly sessions: Gauge;
  /** lease lapses: the node closed every socket because its renewals lapsed (LeaseWatchdog); 0 on a healthy node */
  readonly leaseLapses: Counter;
  readonly commands: Counter<'name' | 'outcome'>;
  /** moves this process made, counted on both ends: `gateway` is the source (out) or the target (in) */
  readonly movesOut: Counter<'gateway' | 'reason'>;
  readonly movesIn: Counter<'gateway' | 'reason'>;
  /** from a dead gateway's last heartbeat to the session `working` on its new gateway (observed by the leader) */
  readonly failoverSeconds: Histogram;
  readonly supervisorLeader: Gauge;
  /** connects WhatsApp refused for this client's WhatsApp Web version (405) */
  readonly clientVersionRefused: Counter;
  /** the inbound spool (Baileys engine): entries written and removed by medium, handed over again, refused at a cap */
  readonly spoolAppends: Counter<'medium'>;
  readonly spoolAppendedBytes: Counter<'medium'>;
  readonly spoolRemoves: Counter<'medium'>;
  readonly spoolReplays: Counter;
  readonly spoolOverflows: Counter<'medium'>;
  /** delivery receipts held until their messages are durable (Baileys engine, held-receipts.ts) */
  readonly receiptsHeld: Gauge;
  /** rejections and exceptions nobody handled, kept from ending the process (StrayFaults) */
  readonly strayFaults: Counter<'kind' | 'attributed'>;
  private readonly registers: MetricsRegistry['registry'][];

  constructor(shared: MetricsRegistry) {
    const registers = [shared.registry];
    this.registers = registers;
    this.sessions = new Gauge({ name: metricName('gateway_sessions'), help: 'sessions holding or seeking a socket on this gateway', registers });
    this.leaseLapses = new Counter({ name: metricName('gateway_lease_lapses_total'), help: 'times the lease renewals lapsed and the gateway closed every socket (self-fencing)', registers });
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
    this.strayFaults = new Counter({
      name: metricName('gateway_stray_faults_total'),
      help: 'unhandled rejections and uncaught exceptions kept from ending the process, by kind and whether traced to a session',
      labelNames: ['kind', 'attributed'],
      registers,
    });
    const medium = { labelNames: ['medium'] as const, registers };
    this.spoolAppends = new Counter({ name: metricName('inbound_spool_appends_total'), help: 'inbound events written to the spool, by medium (redis, memory)', ...medium });
    this.spoolAppendedBytes = new Counter({ name: metricName('inbound_spool_appended_bytes_total'), help: 'payload bytes written to the inbound spool, by medium', ...medium });
    this.spoolRemoves = new Counter({ name: metricName('inbound_spool_removes_total'), help: 'spooled events removed once the gateway took them, by medium', ...medium });
    this.spoolReplays = new Counter({ name: metricName('inbound_spool_replays_total'), help: 'spooled events handed over again on a connect (drained)', registers });
    this.spoolOverflows = new Counter({ name: metricName('inbound_spool_overflows_total'), help: 'inbound events handed over unspooled because the spool (redis: a session at its cap; memory: the fallback) was full', ...medium });
    this.receiptsHeld = new Gauge({
      name: metricName('gateway_receipts_held'),
      help: 'WhatsApp delivery receipts held until their messages are durable (in the spool in Redis, or stored); growing: Redis and PostgreSQL are slow or away, and WhatsApp will deliver those messages again',
      registers,
    });
  }

  /** The held receipts' gauge as the engine's connections report it. */
  receiptMetrics(): HeldReceiptsMetrics {
    return { changed: (delta) => this.receiptsHeld.inc(delta) };
  }

  /** The spool's counters as the spool reports them. */
  spoolMetrics(): InboundSpoolMetrics {
    return {
      appended: (medium, bytes) => {
        this.spoolAppends.inc({ medium });
        this.spoolAppendedBytes.inc({ medium }, bytes);
      },
      removed: (medium) => this.spoolRemoves.inc({ medium }),
      replayed: (count) => this.spoolReplays.inc(count),
      overflowed: (medium) => this.spoolOverflows.inc({ medium }),
    };
  }

  /** Gauges read at scrape time: the spool's length and size in Redis (sessions this process spooled for) and in memory. */
  watchSpool(spool: Pick<InboundSpool, 'measure' | 'memoryStats'>): void {
    const registers = this.registers;
    let last: Promise<{ sessions: number; entries: number; bytes: number }> | null = null;
    // one measurement per scrape, shared by the three Redis gauges
    const measured = () => (last ??= spool.measure().catch(() => ({ sessions: 0, entries: 0, bytes: 0 })).finally(() => setImmediate(() => (last = null))));
    const fromRedis = (name: string, help: string, pick: (m: { sessions: number; entries: number; bytes: number }) => number) =>
      new Gauge({
        name: metricName(name),
        help,
        registers,
        async collect() {
          this.set(pick(await measured()));
        },
      });
    fromRedis('inbound_spool_entries', 'entries in the inbound spool in Redis, as this gateway counted them (written or read, not yet removed)', (m) => m.entries);
    fromRedis('inbound_spool_bytes', 'payload bytes of the inbound spool in Redis, over the same sessions', (m) => m.bytes);
    fromRedis('inbound_spool_sessions', 'sessions with entries in the inbound spool, of those this gateway spooled for', (m) => m.sessions);
    new Gauge({
      name: metricName('inbound_spool_memory_entries'),
      help: 'inbound events held in this process because Redis was unreachable',
      registers,
      collect() {
        this.set(spool.memoryStats().entries);
      },
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
