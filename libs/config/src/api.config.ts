import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { AddressRanges } from '@app/net-guard';
import { ConfigError } from './load-config';
import { toInt, toBool, DEV_JWT_SECRET, refusePlaceholder, BaseConfig } from './base.config';

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
