import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsIP, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { MEDIA_STORE_KINDS, type MediaStoreKind } from '@app/contracts';
import { TargetAllowList } from '@app/net-guard';
import { ConfigError } from './load-config';
import { packageVersion } from './package-version';

export const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value);
export const toBool = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  if (['true', '1', 'yes'].includes(value.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(value.toLowerCase())) return false;
  return value;
};

/** Dev-only values; refused when NODE_ENV=production. */
export const DEV_JWT_SECRET = 'dev-only-jwt-secret-change-me-0123456789abcdef';
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

export function refusePlaceholder(variable: string, value: string | undefined, production: boolean): void {
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
