import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { ConfigError } from './load-config';
import { toInt, toBool, BaseConfig } from './base.config';

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
