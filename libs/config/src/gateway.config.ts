import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { hostname } from 'node:os';
import { ConfigError } from './load-config';
import { toInt, toBool, BaseConfig } from './base.config';

export class GatewayConfig extends BaseConfig {
  @Matches(/^[A-Za-z0-9_.-]{1,128}$/, { message: 'must be 1-128 characters of [A-Za-z0-9_.-]' })
  GATEWAY_ID = hostname().replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 128) || 'gateway';

  @IsIn(['baileys', 'sim'])
  GATEWAY_ENGINE: 'baileys' | 'sim' = 'baileys';

  @Matches(/^https?:\/\/.+/, { message: 'must be an http(s) URL' })
  NETWORK_SIM_URL = 'http://127.0.0.1:4010';

  /** Where the `baileys` engine opens its WebSocket; unset = WhatsApp Web itself (a relay or tests may set it). */
  @IsOptional() @Matches(/^wss?:\/\/.+/, { message: 'must be a ws:// or wss:// URL' })
  WHATSAPP_WEB_URL?: string;

  /**
   * The WhatsApp Web version the `baileys` engine announces (`2.3000.1023456789`); unset = the fetched one, or Baileys'
   * bundled one. WhatsApp refuses outdated versions (405): see docs/baileys-engine.md.
   */
  @IsOptional() @Matches(/^\d{1,3}\.\d{1,6}\.\d{1,12}$/, { message: 'must be a WhatsApp Web version like 2.3000.1023456789' })
  WHATSAPP_WEB_VERSION?: string;

  /**
   * How long the `baileys` engine shows each QR before the next of the network's refs (Baileys' `qrTimeout`); unset =
   * Baileys' own 60 s for the first and 20 s for each next. A test knob (QR rotations in seconds, not minutes): refused
   * when NODE_ENV=production.
   */
  @IsOptional() @Transform(toInt) @IsInt() @Min(200) @Max(600000)
  BAILEYS_QR_TIMEOUT_MS?: number;

  /** Ask web.whatsapp.com for the current version at start (and after a 405); off: no outbound call but WhatsApp's own. */
  @Transform(toBool) @IsBoolean()
  WHATSAPP_WEB_VERSION_FETCH = false;

  /** Bounds that fetch; past it the configured (or bundled) version is used. */
  @Transform(toInt) @IsInt() @Min(100) @Max(60000)
  WHATSAPP_WEB_VERSION_FETCH_TIMEOUT_MS = 5000;

  /**
   * The `sim` engine pings the simulator this often and ends a connection that did not answer the previous ping
   * (as Baileys' keep-alive does with WhatsApp); 0 turns it off.
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(600000)
  NETWORK_SIM_KEEPALIVE_MS = 15000;

  /** WHATSAPP_WEB_VERSION as numbers, or null (set by finalize) */
  waWebVersion: [number, number, number] | null = null;

  /**
   * Test seam (CONTRACT 9): the network simulator whose WhatsApp Web front door the `baileys` engine connects to
   * (`ws://<host>/ws/chat`), trusting the test root key fetched from it at boot. Refused when NODE_ENV=production.
   */
  @IsOptional() @Matches(/^https?:\/\/.+/, { message: 'must be an http(s) URL' })
  WHATSAPP_EMULATOR_URL?: string;

  /** Sessions this node accepts. */
  @Transform(toInt) @IsInt() @Min(1) @Max(100000)
  GATEWAY_CAPACITY = 100;

  /** Health and metrics port (no public API on the gateway). */
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  GATEWAY_HEALTH_PORT = 3001;

  @Transform(toInt) @IsInt() @Min(200) @Max(60000)
  GATEWAY_HEARTBEAT_MS = 2000;

  /** A gateway whose heartbeat is older than this is dead. */
  @Transform(toInt) @IsInt() @Min(500) @Max(300000)
  GATEWAY_TTL_MS = 6000;

  /**
   * Self-fencing: a node whose lease renewals have not succeeded for GATEWAY_TTL_MS minus this closes every socket,
   * so it is closed before any of its leases can expire and another node open the same device. Default: 1500, or half
   * of what the TTL leaves after one heartbeat when that is less. Read `fenceMarginMs`.
   */
  @IsOptional() @Transform(toInt) @IsInt() @Min(50) @Max(60000)
  GATEWAY_FENCE_MARGIN_MS?: number;
  fenceMarginMs = 1500;

  /**
   * How often a node converges on the sessions table without being told: starts what is placed on it, hands off what
   * moved away. The adopt signal (a move, a failover, a drain) and the end of a lapse converge at once; this is the
   * safety sweep behind them (a lost signal, a start command that timed out), so it is slow.
   */
  @Transform(toInt) @IsInt() @Min(50) @Max(600000)
  GATEWAY_ADOPT_INTERVAL_MS = 10000;

  /**
   * The lease keeper thread renews the node's leases while the main thread shows a sign of life at least this often:
   * a busy main thread keeps its leases, a deadlocked or spinning one loses them after this (the node then looks dead
   * and failover moves its sessions). Must exceed GATEWAY_TTL_MS. Default: 60000, or 10 × GATEWAY_TTL_MS when that
   * is more. Read `mainStallMs`.
   */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) @Max(3600000)
  GATEWAY_MAIN_STALL_MS?: number;
  mainStallMs = 60000;

  /**
   * Logins and adoptions start only while the main thread's event loop delay (p99 over the last second) stays below
   * this; above it, the next one waits. After a lapse the pace also ramps up from one at a time.
   */
  @Transform(toInt) @IsInt() @Min(5) @Max(10000)
  GATEWAY_ADMIT_LOOP_DELAY_MS = 100;

  /**
   * Sessions a node starts at once at most when taking sessions over (adopt, failover), so the network sees no storm;
   * fewer while the event loop is slow (GATEWAY_ADMIT_LOOP_DELAY_MS). Their
   * row reads, writes, tokens, creds reads and events go as one statement per group (GroupCommit), so this is also the
   * group size: 64 adopted a failover's sessions faster than 16 on a 2-core box (docs/benchmarks/fleet.md).
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  GATEWAY_ADOPT_CONCURRENCY = 64;

  /** Longest a drain (SIGTERM, `gateway:drain`) takes; the k8s terminationGracePeriodSeconds must match it. */
  @Transform(toInt) @IsInt() @Min(1000) @Max(3600000)
  GATEWAY_DRAIN_GRACE_MS = 30000;

  /** QR codes shown without a scan before the session is marked failed. */
  @Transform(toInt) @IsInt() @Min(1) @Max(50)
  QR_MAX_RETRIES = 5;

  /** Consecutive failed connects before the session is marked failed. */
  @Transform(toInt) @IsInt() @Min(1) @Max(100)
  RECONNECT_MAX_ATTEMPTS = 10;

  /** First reconnect delay after a transient close; doubles per consecutive failure up to the max. */
  @Transform(toInt) @IsInt() @Min(10) @Max(60000)
  RECONNECT_BASE_DELAY_MS = 1000;

  @Transform(toInt) @IsInt() @Min(10) @Max(600000)
  RECONNECT_MAX_DELAY_MS = 30000;

  /** How long a shown QR stays readable through the API (the network rotates QRs about every 20 s). */
  @Transform(toInt) @IsInt() @Min(1000) @Max(300000)
  QR_TTL_MS = 20000;

  /** Commands this node executes at once. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  GATEWAY_COMMAND_CONCURRENCY = 32;

  /** A queued message that waits longer than this for a connection ends `failed` (`expired: …`). */
  @Transform(toInt) @IsInt() @Min(1) @Max(30 * 24 * 3600)
  MESSAGE_TTL_SECONDS = 86400;

  /** How often the gateway looks for queued messages of its sessions (the reconciler behind a lost send signal). */
  @Transform(toInt) @IsInt() @Min(50) @Max(600000)
  MESSAGE_SWEEP_MS = 2000;

  /**
   * Inbound texts that opt a contact out of a session's campaigns (CONTRACT 17): comma-separated, matched against the
   * whole message, trimmed, case-insensitive.
   */
  @IsString()
  OPT_OUT_KEYWORDS = 'STOP';

  /**
   * The longest the gateway's campaign scheduler sleeps between looks at what is due (docs/campaigns.md): it wakes
   * earlier for the next due send it knows of, and at once on a signal; this bounds the start of one whose signal was lost.
   */
  @Transform(toInt) @IsInt() @Min(50) @Max(60000)
  CAMPAIGN_SCHEDULER_MAX_SLEEP_MS = 1000;

  /** presenceTyping: "typing…" lasts text length × this, clamped to [TYPING_MIN_MS, TYPING_MAX_MS]. */
  @Transform(toInt) @IsInt() @Min(0) @Max(1000)
  TYPING_MS_PER_CHAR = 40;

  @Transform(toInt) @IsInt() @Min(0) @Max(60000)
  TYPING_MIN_MS = 500;

  @Transform(toInt) @IsInt() @Min(0) @Max(60000)
  TYPING_MAX_MS = 3000;

  /** Eager media downloads (MEDIA_STORE not `none`) this node runs at once. */
  @Transform(toInt) @IsInt() @Min(1) @Max(256)
  MEDIA_STORE_CONCURRENCY = 4;

  /** Tries of one eager download before it is given up (logged; the on-demand path still serves the media). */
  @Transform(toInt) @IsInt() @Min(1) @Max(50)
  MEDIA_STORE_ATTEMPTS = 6;

  /** First retry delay of an eager download; doubles per try. */
  @Transform(toInt) @IsInt() @Min(10) @Max(600000)
  MEDIA_STORE_BACKOFF_MS = 1000;

  /**
   * Runs the fleet supervisor (failover and rebalance; one leader at a time). Off only where several fleets share
   * one database (e2e files), since a leader adopts every session whose gateway is gone.
   */
  @Transform(toBool) @IsBoolean()
  SUPERVISOR_ENABLED = true;

  /** How often the supervisor's leader looks at the fleet (dead gateways, spread). */
  @Transform(toInt) @IsInt() @Min(50) @Max(60000)
  SUPERVISOR_INTERVAL_MS = 500;

  /** Rebalance moves per minute at most, spaced evenly (0 turns rebalancing off); failover is never rate-limited. */
  @Transform(toInt) @IsInt() @Min(0) @Max(6000)
  REBALANCE_MOVES_PER_MIN = 30;

  /** Rebalance only while the fullest and the emptiest live gateway differ by more than this many points of load (% of capacity). */
  @Transform(toInt) @IsInt() @Min(0) @Max(100)
  REBALANCE_THRESHOLD = 10;

  /**
   * Test-only fault injection: `crash-after-send` kills the process (SIGKILL) right after the network acknowledged a
   * send and before it is recorded, to prove a resend is not a duplicate; `block-on-sigusr2` makes a SIGUSR2 block the
   * main thread's event loop for 3 × GATEWAY_TTL_MS (an engine starving it), to prove the leases outlive it. Refused
   * when NODE_ENV=production.
   */
  @IsOptional() @IsIn(['', 'crash-after-send', 'block-on-sigusr2'])
  GATEWAY_FAULT: '' | 'crash-after-send' | 'block-on-sigusr2' = '';

  override finalize(): void {
    super.finalize();
    if (this.TYPING_MIN_MS > this.TYPING_MAX_MS) throw new ConfigError('TYPING_MIN_MS', 'must not exceed TYPING_MAX_MS');
    if (this.GATEWAY_HEARTBEAT_MS >= this.GATEWAY_TTL_MS) throw new ConfigError('GATEWAY_HEARTBEAT_MS', 'must be below GATEWAY_TTL_MS');
    this.fenceMarginMs = this.GATEWAY_FENCE_MARGIN_MS ?? Math.min(1500, Math.floor((this.GATEWAY_TTL_MS - this.GATEWAY_HEARTBEAT_MS) / 2));
    if (this.fenceMarginMs + this.GATEWAY_HEARTBEAT_MS >= this.GATEWAY_TTL_MS) {
      throw new ConfigError('GATEWAY_FENCE_MARGIN_MS', 'plus GATEWAY_HEARTBEAT_MS must stay below GATEWAY_TTL_MS (the node would fence itself between two heartbeats)');
    }
    this.mainStallMs = this.GATEWAY_MAIN_STALL_MS ?? Math.max(60000, 10 * this.GATEWAY_TTL_MS);
    if (this.mainStallMs <= this.GATEWAY_TTL_MS) throw new ConfigError('GATEWAY_MAIN_STALL_MS', 'must exceed GATEWAY_TTL_MS');
    if (this.GATEWAY_FAULT && this.isProduction) throw new ConfigError('GATEWAY_FAULT', 'is refused when NODE_ENV=production');
    this.waWebVersion = this.WHATSAPP_WEB_VERSION ? (this.WHATSAPP_WEB_VERSION.split('.').map(Number) as [number, number, number]) : null;
    if (this.WHATSAPP_EMULATOR_URL && this.isProduction) throw new ConfigError('WHATSAPP_EMULATOR_URL', 'is refused when NODE_ENV=production');
    if (this.WHATSAPP_EMULATOR_URL && this.WHATSAPP_WEB_URL) throw new ConfigError('WHATSAPP_EMULATOR_URL', 'cannot be combined with WHATSAPP_WEB_URL');
    if (this.BAILEYS_QR_TIMEOUT_MS !== undefined && this.isProduction) throw new ConfigError('BAILEYS_QR_TIMEOUT_MS', 'is refused when NODE_ENV=production');
  }
}
