import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsIP, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { hostname } from 'node:os';
import { MEDIA_STORE_KINDS, type MediaStoreKind } from '@app/contracts';
import { AddressRanges, TargetAllowList } from '@app/net-guard';
import { ConfigError } from './load-config';
import { packageVersion } from './package-version';

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value);
const toBool = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  if (['true', '1', 'yes'].includes(value.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(value.toLowerCase())) return false;
  return value;
};

/** Dev-only values; refused when NODE_ENV=production. */
const DEV_JWT_SECRET = 'dev-only-jwt-secret-change-me-0123456789abcdef';
const DEV_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * Secrets that are public knowledge: the development defaults above and the placeholders of the shipped manifests
 * (k8s/overlays/example/secret.example.yaml, examples). Production refuses them, and anything that still says "change me", so a
 * copied example never signs real tokens or encrypts real sessions.
 */
export const KNOWN_PLACEHOLDER_SECRETS: readonly string[] = [
  DEV_JWT_SECRET,
  DEV_ENCRYPTION_KEY,
  'change-me-to-at-least-32-random-characters',
  'change-me-32-bytes-base64=',
];

function isPlaceholderSecret(value: string): boolean {
  return KNOWN_PLACEHOLDER_SECRETS.includes(value.trim()) || /change[-_ ]?me/i.test(value);
}

function refusePlaceholder(variable: string, value: string | undefined, production: boolean): void {
  if (production && value && isPlaceholderSecret(value)) {
    throw new ConfigError(variable, 'is a known placeholder value; generate a real secret (openssl rand -base64 32)');
  }
}

/** What every process shares: storage, Redis, crypto. */
export class BaseConfig {
  @IsOptional() @IsIn(['production', 'development', 'test'])
  NODE_ENV: 'production' | 'development' | 'test' = 'development';

  @Matches(/^postgres(ql)?:\/\/.+/, { message: 'must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gateway';

  @Matches(/^rediss?:\/\/.+/, { message: 'must be a redis:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /**
   * The address the ops port (/healthz, /readyz, /metrics: API_OPS_PORT, GATEWAY_HEALTH_PORT, DISPATCHER_HEALTH_PORT)
   * binds to. This host only by default, so a process started by hand does not show its metrics to the network; the
   * container images' deployments (docker/compose.yml, k8s/base/config.yaml) set 0.0.0.0, which probes and scrapers
   * reaching the container's address need; an internal interface's address keeps them on that network.
   */
  @IsIP(undefined, { message: 'must be an IP address (0.0.0.0 every interface, 127.0.0.1 this host only, :: IPv6)' })
  OPS_HOST = '127.0.0.1';

  /** Every Redis key (queues, streams, registry) lives under this prefix. */
  @Matches(/^[A-Za-z0-9_.:-]{1,64}$/, { message: 'must be 1-64 characters of [A-Za-z0-9_.:-]' })
  REDIS_KEY_PREFIX = 'gw';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** `auto`: short human lines when the output is a terminal, JSON otherwise; `json` / `pretty` force one. */
  @IsIn(['auto', 'json', 'pretty'])
  LOG_FORMAT: 'auto' | 'json' | 'pretty' = 'auto';

  /** What this process reports as its version (gateway registry); package.json's unless set. */
  @Matches(/^[A-Za-z0-9_.+-]{1,64}$/, { message: 'must be 1-64 characters of [A-Za-z0-9_.+-]' })
  APP_VERSION = packageVersion();

  /** 32 bytes, base64: encrypts webhook secrets and session auth state at rest. */
  @IsOptional() @IsString()
  SECRET_ENCRYPTION_KEY?: string;

  /** Comma-separated older keys, still accepted for decryption during a key rotation. */
  @IsOptional() @IsString()
  SECRET_ENCRYPTION_PREVIOUS_KEYS?: string;

  /**
   * Default quotas of an organization (the admin CLI overrides them per organization: `org:quota`). Here rather than
   * in ApiConfig because the CLI enforces the API-key quota itself.
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(1_000_000)
  QUOTA_SESSIONS = 100;

  @Transform(toInt) @IsInt() @Min(0) @Max(1_000_000)
  QUOTA_WEBHOOKS = 100;

  @Transform(toInt) @IsInt() @Min(0) @Max(1_000_000)
  QUOTA_API_KEYS = 100;

  /**
   * Where inbound media is kept once the gateways downloaded it (docs/media-store.md): `none` (default) fetches it from
   * the network on each GET; `postgres` keeps the bytes in the `media_blobs` table (small deployments); `s3` in an
   * S3-compatible bucket (credentials from the standard AWS environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
   * AWS_PROFILE, web identity…). The API reads what the gateways write, so every process must say the same.
   */
  @IsIn(MEDIA_STORE_KINDS)
  MEDIA_STORE: MediaStoreKind = 'none';

  /** Larger inbound media is not kept (still served from the network on demand). */
  @Transform(toInt) @IsInt() @Min(1024) @Max(512 * 1024 * 1024)
  MEDIA_STORE_MAX_BYTES = 16 * 1024 * 1024;

  @IsOptional() @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'must be an S3 bucket name (3-63 characters of a-z 0-9 . -)' })
  MEDIA_STORE_S3_BUCKET?: string;

  /** An S3-compatible server (MinIO, Ceph, R2, …); unset = AWS S3 of MEDIA_STORE_S3_REGION. */
  @IsOptional() @Matches(/^https?:\/\/.+/, { message: 'must be an http(s) URL' })
  MEDIA_STORE_S3_ENDPOINT?: string;

  @Matches(/^[a-z0-9-]{1,32}$/, { message: 'must be a region name like eu-west-1' })
  MEDIA_STORE_S3_REGION = 'us-east-1';

  /** Path-style addressing (`<endpoint>/<bucket>/<key>`), which most S3-compatible servers need. */
  @Transform(toBool) @IsBoolean()
  MEDIA_STORE_S3_FORCE_PATH_STYLE = false;

  /** Object keys are `<prefix><organizationId>/<sessionId>/<messageId>`. */
  @Matches(/^[A-Za-z0-9_./-]{0,128}$/, { message: 'must be at most 128 characters of [A-Za-z0-9_./-]' })
  MEDIA_STORE_S3_PREFIX = 'media/';

  /**
   * Private proxy targets the operator allows for sessions' `proxyUrl` (comma-separated host names, addresses and CIDR
   * ranges: `proxy.internal,10.8.0.0/16`). Any other loopback, private, link-local or metadata proxy is refused when it
   * is saved (API) and when it is dialled (gateway). Empty: none.
   */
  @IsOptional() @IsString()
  SESSION_PROXY_ALLOWED = '';

  /** SESSION_PROXY_ALLOWED, parsed (finalize). */
  sessionProxyAllowList: TargetAllowList = TargetAllowList.EMPTY;

  get quotaDefaults(): { sessions: number; webhooks: number; apiKeys: number } {
    return { sessions: this.QUOTA_SESSIONS, webhooks: this.QUOTA_WEBHOOKS, apiKeys: this.QUOTA_API_KEYS };
  }

  get isProduction(): boolean {
    return this.NODE_ENV === 'production';
  }

  /** Decoded encryption keys, current first. */
  encryptionKeys: Buffer[] = [];
  warnings: string[] = [];

  finalize(): void {
    try {
      this.sessionProxyAllowList = TargetAllowList.parse(this.SESSION_PROXY_ALLOWED);
    } catch (err) {
      throw new ConfigError('SESSION_PROXY_ALLOWED', `must list host names, addresses or CIDR ranges: ${(err as Error).message}`);
    }
    if (this.MEDIA_STORE === 's3' && !this.MEDIA_STORE_S3_BUCKET) throw new ConfigError('MEDIA_STORE_S3_BUCKET', 'is required when MEDIA_STORE=s3');
    const current = this.SECRET_ENCRYPTION_KEY ?? (this.isProduction ? undefined : DEV_ENCRYPTION_KEY);
    if (!current) throw new ConfigError('SECRET_ENCRYPTION_KEY', 'is required when NODE_ENV=production');
    refusePlaceholder('SECRET_ENCRYPTION_KEY', this.SECRET_ENCRYPTION_KEY, this.isProduction);
    if (!this.SECRET_ENCRYPTION_KEY) this.warnings.push('SECRET_ENCRYPTION_KEY not set: using a development key');
    const keys = [current, ...(this.SECRET_ENCRYPTION_PREVIOUS_KEYS ?? '').split(',').filter(Boolean)];
    this.encryptionKeys = keys.map((k, i) => {
      const buf = Buffer.from(k.trim(), 'base64');
      if (buf.length !== 32) {
        throw new ConfigError(i === 0 ? 'SECRET_ENCRYPTION_KEY' : 'SECRET_ENCRYPTION_PREVIOUS_KEYS', 'must be 32 bytes encoded in base64');
      }
      return buf;
    });
  }
}

export class ApiConfig extends BaseConfig {
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  /** Health and metrics port, kept off the public one: /metrics names routes and load (the dispatcher has 3002). */
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  API_OPS_PORT = 3003;

  @IsOptional() @IsString()
  JWT_SECRET?: string;

  @Transform(toInt) @IsInt() @Min(60) @Max(7 * 24 * 3600)
  JWT_TTL_SECONDS = 3600;

  /** How far a JWT's `iat` may lie in the future (clocks of the replicas differ a little). */
  @Transform(toInt) @IsInt() @Min(0) @Max(300)
  JWT_CLOCK_SKEW_SECONDS = 30;

  /** Backstop of the principal cache (it is exact by construction, see docs/auth.md): an entry's lifetime and the entry count. */
  @Transform(toInt) @IsInt() @Min(0) @Max(3600000)
  PRINCIPAL_CACHE_TTL_MS = 60000;

  @Transform(toInt) @IsInt() @Min(0) @Max(1000000)
  PRINCIPAL_CACHE_MAX_ENTRIES = 10000;

  @Transform(toBool) @IsBoolean()
  WEBHOOK_ALLOW_PRIVATE_TARGETS = false;

  /** How long the API waits for a gateway's reply before answering 503. */
  @Transform(toInt) @IsInt() @Min(100) @Max(120000)
  COMMAND_TIMEOUT_MS = 10000;

  /** Largest accepted JSON body, bytes. */
  @Transform(toInt) @IsInt() @Min(1024) @Max(50 * 1024 * 1024)
  BODY_LIMIT_BYTES = 1024 * 1024;

  /** Where inbound media of `sim` sessions is fetched from (the network simulator). */
  @Matches(/^https?:\/\/.+/, { message: 'must be an http(s) URL' })
  NETWORK_SIM_URL = 'http://127.0.0.1:4010';

  /**
   * Test seam (CONTRACT 9), as the gateway's: the network simulator whose WhatsApp Web media host inbound media of
   * `baileys` sessions is downloaded from; downloads trust its per-run media CA beside the system roots
   * (@app/media emulatorMediaDispatcher). Refused when NODE_ENV=production.
   */
  @IsOptional() @Matches(/^https?:\/\/.+/, { message: 'must be an http(s) URL' })
  WHATSAPP_EMULATOR_URL?: string;

  /** Largest media a send may carry, bytes (fetched from a URL or decoded from base64). */
  @Transform(toInt) @IsInt() @Min(1024) @Max(100 * 1024 * 1024)
  MEDIA_MAX_BYTES = 16 * 1024 * 1024;

  /** How long fetching a send's media URL may take, from connect to the last byte. */
  @Transform(toInt) @IsInt() @Min(100) @Max(300000)
  MEDIA_FETCH_TIMEOUT_MS = 15000;

  /**
   * Fair share of a shared fleet: an organization may hold at most this percentage of the live gateways' total
   * capacity (at least one session), so it can never take the last slots from the others.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(100)
  QUOTA_FLEET_SHARE_PERCENT = 50;

  /** Requests per minute per credential (API key, user), across replicas. */
  @Transform(toInt) @IsInt() @Min(1) @Max(10_000_000)
  RATE_LIMIT_CREDENTIAL_PER_MIN = 1200;

  /** Requests per minute per client IP, across replicas (health and metrics are not counted). */
  @Transform(toInt) @IsInt() @Min(1) @Max(10_000_000)
  RATE_LIMIT_IP_PER_MIN = 3000;

  /** Login attempts per minute per client IP. */
  @Transform(toInt) @IsInt() @Min(1) @Max(10_000_000)
  LOGIN_RATE_IP_PER_MIN = 30;

  /** Failed logins of one account from one client IP allowed before that pair's exponential backoff starts. */
  @Transform(toInt) @IsInt() @Min(0) @Max(1000)
  LOGIN_FREE_FAILURES_PER_ACCOUNT = 5;

  /**
   * Failed logins of one account from every IP together allowed before the account backs off everywhere (its owner
   * included): high, so one stranger cannot lock an owner out; a guess spread over many addresses still slows down.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(1_000_000)
  LOGIN_ACCOUNT_CEILING_FAILURES = 100;

  /** Failed logins from one IP (any account) allowed before its exponential backoff starts. */
  @Transform(toInt) @IsInt() @Min(0) @Max(100_000)
  LOGIN_FREE_FAILURES_PER_IP = 20;

  /** First backoff after the free failures; doubles per further failure up to the max. */
  @Transform(toInt) @IsInt() @Min(1) @Max(3_600_000)
  LOGIN_BACKOFF_BASE_MS = 1000;

  @Transform(toInt) @IsInt() @Min(1) @Max(86_400_000)
  LOGIN_BACKOFF_MAX_MS = 15 * 60_000;

  /**
   * Proxies whose `X-Forwarded-For` is believed (comma-separated IPv4/IPv6 CIDRs or addresses): when the socket's peer
   * is one of them, the client is the right-most address of the header that is not a trusted proxy. Empty: the peer
   * is the client and the header is ignored. Decides API keys' allow-lists, login backoff and the rate limits' IP.
   */
  @IsOptional() @IsString()
  TRUSTED_PROXIES = '';

  /** TRUSTED_PROXIES, parsed (finalize). */
  trustedProxies: AddressRanges = AddressRanges.parse([]);

  /** How long audit log entries are kept, days; a periodic sweep deletes older ones. */
  @Transform(toInt) @IsInt() @Min(1) @Max(36500)
  AUDIT_RETENTION_DAYS = 365;

  /**
   * Whether changes write audit entries. Only `bench:api` turns it off, for the baseline of what an entry costs the
   * write path; refused when NODE_ENV=production.
   */
  @Transform(toBool) @IsBoolean()
  AUDIT_LOG_ENABLED = true;

  /** How often each API replica runs the audit log's retention sweep, ms. */
  @Transform(toInt) @IsInt() @Min(1000) @Max(86_400_000)
  AUDIT_RETENTION_SWEEP_MS = 3_600_000;

  /** Where invitation and password-reset mails are sent through (`smtp://user:pass@host:587`, `smtps://…`). Unset: no mail; the link is only returned to the caller. */
  @IsOptional() @Matches(/^smtps?:\/\/.+/, { message: 'must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string;

  /** The From of those mails. */
  @Matches(/^[^\s@<>]+@[^\s@<>]+$/, { message: 'must be an email address' })
  SMTP_FROM = 'gateway@localhost';

  /** Where users reach this deployment (the dashboard): the base of invitation and password-reset links. */
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL' })
  PUBLIC_URL = 'http://localhost:3000';

  /** How long an invitation can be accepted, hours. */
  @Transform(toInt) @IsInt() @Min(1) @Max(24 * 90)
  INVITATION_TTL_HOURS = 168;

  /** How long a password-reset link works, minutes. */
  @Transform(toInt) @IsInt() @Min(5) @Max(7 * 24 * 60)
  PASSWORD_RESET_TTL_MINUTES = 60;

  jwtSecret = '';

  /**
   * JSON body limit of the send route: MEDIA_MAX_BYTES of media as base64 (4 characters per 3 bytes) plus room for
   * the other fields; every other route keeps BODY_LIMIT_BYTES.
   */
  get sendBodyLimitBytes(): number {
    return Math.max(this.BODY_LIMIT_BYTES, Math.ceil(this.MEDIA_MAX_BYTES / 3) * 4 + 64 * 1024);
  }

  /**
   * JSON body limit of a campaign's creation: a media campaign's file as base64 (MEDIA_MAX_BYTES, as a send) on top of
   * what any body may be (BODY_LIMIT_BYTES: the recipients).
   */
  get campaignBodyLimitBytes(): number {
    return Math.ceil(this.MEDIA_MAX_BYTES / 3) * 4 + this.BODY_LIMIT_BYTES;
  }

  override finalize(): void {
    super.finalize();
    if (this.WHATSAPP_EMULATOR_URL && this.isProduction) throw new ConfigError('WHATSAPP_EMULATOR_URL', 'is refused when NODE_ENV=production');
    if (this.LOGIN_BACKOFF_BASE_MS > this.LOGIN_BACKOFF_MAX_MS) throw new ConfigError('LOGIN_BACKOFF_BASE_MS', 'must not exceed LOGIN_BACKOFF_MAX_MS');
    if (!this.AUDIT_LOG_ENABLED && this.isProduction) throw new ConfigError('AUDIT_LOG_ENABLED', 'is refused when NODE_ENV=production');
    try {
      this.trustedProxies = AddressRanges.parse(this.TRUSTED_PROXIES.split(',').map((e) => e.trim()).filter(Boolean));
    } catch (err) {
      throw new ConfigError('TRUSTED_PROXIES', `must list IPv4/IPv6 addresses or CIDR ranges: ${(err as Error).message}`);
    }
    if (this.JWT_SECRET) {
      refusePlaceholder('JWT_SECRET', this.JWT_SECRET, this.isProduction);
      if (this.JWT_SECRET.length < 32) throw new ConfigError('JWT_SECRET', 'must be at least 32 characters');
      this.jwtSecret = this.JWT_SECRET;
    } else if (this.isProduction) {
      throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
    } else {
      this.warnings.push('JWT_SECRET not set: using a development secret');
      this.jwtSecret = DEV_JWT_SECRET;
    }
  }
}

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
   * row reads, writes, tokens, creds reads and events go as one statement per group (TickBatch), so this is also the
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

export class DispatcherConfig extends BaseConfig {
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  DISPATCHER_HEALTH_PORT = 3002;

  @Transform(toBool) @IsBoolean()
  WEBHOOK_ALLOW_PRIVATE_TARGETS = false;

  /** Concurrent delivery POSTs per dispatcher process. */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  DISPATCHER_CONCURRENCY = 64;

  @Transform(toInt) @IsInt() @Min(100) @Max(120000)
  WEBHOOK_TIMEOUT_MS = 15000;

  /** Extra PEM CA bundle trusted for HTTPS receivers (self-signed receivers, tests). */
  @IsOptional() @IsString()
  WEBHOOK_CA_FILE?: string;

  /** How often the reconciler looks for deliveries or events that lost their Redis side. */
  @Transform(toInt) @IsInt() @Min(200) @Max(600000)
  RECONCILE_INTERVAL_MS = 5000;

  /** BullMQ job lock: a job held by a dead dispatcher is taken over after about this long. */
  @Transform(toInt) @IsInt() @Min(1000) @Max(600000)
  DISPATCHER_JOB_LOCK_MS = 30000;

  /** Full reload of the webhook cache, a safety net behind the change notifications. */
  @Transform(toInt) @IsInt() @Min(1000) @Max(3600000)
  WEBHOOK_CACHE_REFRESH_MS = 30000;

  /**
   * POSTs one webhook may have in flight in one dispatcher (its share of DISPATCHER_CONCURRENCY), so a receiver that
   * hangs cannot hold every slot. 0: half of DISPATCHER_CONCURRENCY (at least 1).
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(1000)
  DISPATCHER_WEBHOOK_CONCURRENCY = 0;

  /**
   * The failures a webhook's circuit breaker must see within its 10 s window before it opens (no POST until a probe
   * succeeds): it opens when none of the window's attempts succeeded, or when its failure ratio is above 50 %.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(100000)
  WEBHOOK_BREAKER_FAILURES = 10;

  /** How long an opened breaker waits before its probe; doubled after a failed probe, up to twice this. */
  @Transform(toInt) @IsInt() @Min(100) @Max(3600000)
  WEBHOOK_BREAKER_COOLDOWN_MS = 1000;

  /**
   * A webhook failing continuously (no 2xx) for this long is disabled (`active` false, `disabledAt` set) with a
   * `webhook.disabled` event; PATCH `active: true` re-enables it and resumes its pending deliveries. 0: never.
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(2592000000)
  WEBHOOK_DISABLE_AFTER_MS = 259200000;

  /** Where inbound media of `sim` sessions is read when the Chatwoot destination uploads it as an attachment. */
  @IsString()
  NETWORK_SIM_URL = 'http://127.0.0.1:4010';

  /** Test only (refused with NODE_ENV=production): the WhatsApp emulator's media host, for Chatwoot attachments. */
  @IsOptional() @IsString()
  WHATSAPP_EMULATOR_URL?: string;

  override finalize(): void {
    super.finalize();
    if (this.WHATSAPP_EMULATOR_URL && this.isProduction) throw new ConfigError('WHATSAPP_EMULATOR_URL', 'is refused when NODE_ENV=production');
  }

  /** Each webhook's POST slots in this dispatcher (DISPATCHER_WEBHOOK_CONCURRENCY, or its default). */
  get webhookConcurrency(): number {
    return this.DISPATCHER_WEBHOOK_CONCURRENCY || Math.max(1, Math.floor(this.DISPATCHER_CONCURRENCY / 2));
  }
}

export class SimConfig {
  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  SIM_PORT = 4010;

  /** Interface the simulator listens on; all of them by default, as the other apps do (containers). */
  @IsString()
  SIM_HOST = '0.0.0.0';

  /** How long each QR stays current before the network rotates it (WhatsApp: about 20 s). Tests set it short. */
  @Transform(toInt) @IsInt() @Min(20) @Max(600000)
  SIM_QR_INTERVAL_MS = 20000;

  /** Ping each device socket this often and drop one that missed a pong (0: off), as WhatsApp drops a silent client. */
  @Transform(toInt) @IsInt() @Min(0) @Max(600000)
  SIM_KEEPALIVE_MS = 0;

  /** How long after sending a device may edit its message (WhatsApp: 15 minutes). Tests set it short. */
  @Transform(toInt) @IsInt() @Min(0) @Max(86400000)
  SIM_EDIT_WINDOW_MS = 15 * 60 * 1000;

  /**
   * Benchmarks only: `POST /sim/whatsapp-web/devices` links a WhatsApp Web device made outside the QR flow (its keys
   * generated by the caller), so a bench can hold 1 000 real sessions without pairing each. Off by default; refused
   * when NODE_ENV=production.
   */
  @Transform(toBool) @IsBoolean()
  SIM_TEST_PRELINK = false;

  @IsOptional() @IsIn(['production', 'development', 'test'])
  NODE_ENV: 'production' | 'development' | 'test' = 'development';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  @IsIn(['auto', 'json', 'pretty'])
  LOG_FORMAT: 'auto' | 'json' | 'pretty' = 'auto';

  finalize(): void {
    if (this.SIM_TEST_PRELINK && this.NODE_ENV === 'production') throw new ConfigError('SIM_TEST_PRELINK', 'is refused when NODE_ENV=production');
  }
}

/**
 * The admin CLI. `BOOTSTRAP_*` name a first organization, its owner and a first API key, created by
 * `cli bootstrap` (run by `npm start` and compose's migrate service) once: later runs change nothing.
 */
export class CliConfig extends BaseConfig {
  @IsOptional() @IsString()
  BOOTSTRAP_ORG_NAME?: string;

  @IsOptional() @IsString()
  BOOTSTRAP_OWNER_EMAIL?: string;

  @IsOptional() @IsString()
  BOOTSTRAP_OWNER_PASSWORD?: string;

  /** the three bootstrap values, or null when none is set */
  get bootstrap(): { name: string; ownerEmail: string; ownerPassword: string } | null {
    if (!this.BOOTSTRAP_ORG_NAME) return null;
    return { name: this.BOOTSTRAP_ORG_NAME, ownerEmail: this.BOOTSTRAP_OWNER_EMAIL!, ownerPassword: this.BOOTSTRAP_OWNER_PASSWORD! };
  }

  override finalize(): void {
    super.finalize();
    const set = (['BOOTSTRAP_ORG_NAME', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD'] as const).filter((k) => this[k]);
    if (set.length > 0 && set.length < 3) {
      const missing = ['BOOTSTRAP_ORG_NAME', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD'].find((k) => !set.includes(k as never))!;
      throw new ConfigError(missing, `is required when ${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set`);
    }
    if (this.BOOTSTRAP_OWNER_PASSWORD && this.BOOTSTRAP_OWNER_PASSWORD.length < 8) throw new ConfigError('BOOTSTRAP_OWNER_PASSWORD', 'must be at least 8 characters');
  }
}
