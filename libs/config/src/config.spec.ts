import { ApiConfig, CliConfig, DispatcherConfig, GatewayConfig, KNOWN_PLACEHOLDER_SECRETS, SimConfig } from './config';
import { ConfigError, loadConfig } from './load-config';

describe('configuration', () => {
  it('serves local use with defaults and warns about dev secrets', () => {
    const c = loadConfig(ApiConfig, {});
    expect(c.PORT).toBe(3000);
    expect(c.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/gateway');
    expect(c.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(c.encryptionKeys[0]).toHaveLength(32);
    expect(c.warnings.join(' ')).toMatch(/JWT_SECRET/);
  });

  it('reads the WhatsApp Web version as numbers; without one the engine picks (fetch off by default)', () => {
    const c = loadConfig(GatewayConfig, { WHATSAPP_WEB_VERSION: '2.3000.1023456789' });
    expect(c.waWebVersion).toEqual([2, 3000, 1023456789]);
    const d = loadConfig(GatewayConfig, {});
    expect(d.waWebVersion).toBeNull();
    expect(d.WHATSAPP_WEB_VERSION_FETCH).toBe(false);
    expect(d.WHATSAPP_WEB_VERSION_FETCH_TIMEOUT_MS).toBe(5000);
  });

  it('binds the ops port where OPS_HOST says (this host only by default), refusing what is not an IP address', () => {
    expect([loadConfig(GatewayConfig, {}).OPS_HOST, loadConfig(DispatcherConfig, {}).OPS_HOST, loadConfig(ApiConfig, {}).OPS_HOST]).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
    expect(loadConfig(DispatcherConfig, { OPS_HOST: '0.0.0.0' }).OPS_HOST).toBe('0.0.0.0');
    expect(loadConfig(ApiConfig, { OPS_HOST: '::1' }).OPS_HOST).toBe('::1');
    expect(() => loadConfig(ApiConfig, { OPS_HOST: 'metrics.internal' })).toThrow(/OPS_HOST must be an IP address/);
  });

  it('keeps no media by default; an S3 media store needs its bucket, and the kind is one of none, postgres, s3', () => {
    expect(loadConfig(ApiConfig, {}).MEDIA_STORE).toBe('none');
    expect(loadConfig(GatewayConfig, { MEDIA_STORE: 'postgres' }).MEDIA_STORE).toBe('postgres');
    expect(() => loadConfig(GatewayConfig, { MEDIA_STORE: 's3' })).toThrow(/MEDIA_STORE_S3_BUCKET is required when MEDIA_STORE=s3/);
    const s3 = loadConfig(ApiConfig, { MEDIA_STORE: 's3', MEDIA_STORE_S3_BUCKET: 'wa-media', MEDIA_STORE_S3_FORCE_PATH_STYLE: 'true' });
    expect(s3).toMatchObject({ MEDIA_STORE_S3_BUCKET: 'wa-media', MEDIA_STORE_S3_FORCE_PATH_STYLE: true, MEDIA_STORE_S3_REGION: 'us-east-1', MEDIA_STORE_S3_PREFIX: 'media/' });
    expect(() => loadConfig(ApiConfig, { MEDIA_STORE: 'disk' })).toThrow(ConfigError);
    expect(() => loadConfig(ApiConfig, { MEDIA_STORE: 's3', MEDIA_STORE_S3_BUCKET: 'Not_A_Bucket' })).toThrow(/MEDIA_STORE_S3_BUCKET must be an S3 bucket name/);
  });

  it('parses SESSION_PROXY_ALLOWED into the allow-list the API and the gateway check proxies against', () => {
    expect(loadConfig(ApiConfig, {}).sessionProxyAllowList.isEmpty).toBe(true);
    const list = loadConfig(GatewayConfig, { SESSION_PROXY_ALLOWED: 'proxy.internal,10.8.0.0/16' }).sessionProxyAllowList;
    expect([list.allowsHost('proxy.internal'), list.allowsHost('10.8.1.1'), list.allowsHost('10.9.1.1')]).toEqual([true, true, false]);
  });

  it('lets a campaign\'s creation carry MEDIA_MAX_BYTES of base64 on top of BODY_LIMIT_BYTES (its recipients)', () => {
    const c = loadConfig(ApiConfig, { MEDIA_MAX_BYTES: '3000', BODY_LIMIT_BYTES: '1048576' });
    expect(c.campaignBodyLimitBytes).toBe(4000 + 1048576);
  });

  it('converts numbers and booleans', () => {
    const c = loadConfig(ApiConfig, { PORT: '8080', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    expect(c.PORT).toBe(8080);
    expect(c.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
  });

  it.each([
    [ApiConfig, { PORT: 'abc' }, 'PORT'],
    [ApiConfig, { PORT: '70000' }, 'PORT'],
    [ApiConfig, { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [ApiConfig, { REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [ApiConfig, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' }, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'],
    [ApiConfig, { SESSION_PROXY_ALLOWED: '10.0.0.0/40' }, 'SESSION_PROXY_ALLOWED'],
    [GatewayConfig, { SESSION_PROXY_ALLOWED: 'proxy.internal, not a host' }, 'SESSION_PROXY_ALLOWED'],
    [ApiConfig, { SECRET_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'SECRET_ENCRYPTION_KEY'],
    [ApiConfig, { JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [ApiConfig, { NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }, 'JWT_SECRET'],
    [ApiConfig, { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40) }, 'SECRET_ENCRYPTION_KEY'],
    [GatewayConfig, { GATEWAY_ENGINE: 'whatsmeow' }, 'GATEWAY_ENGINE'],
    [GatewayConfig, { GATEWAY_ID: 'has spaces' }, 'GATEWAY_ID'],
    [GatewayConfig, { WHATSAPP_WEB_VERSION: '2.3000' }, 'WHATSAPP_WEB_VERSION'],
    [GatewayConfig, { WHATSAPP_WEB_VERSION: 'v2.3000.1' }, 'WHATSAPP_WEB_VERSION'],
    [GatewayConfig, { WHATSAPP_WEB_VERSION_FETCH: 'sometimes' }, 'WHATSAPP_WEB_VERSION_FETCH'],
    [GatewayConfig, { WHATSAPP_EMULATOR_URL: 'ws://127.0.0.1:4010' }, 'WHATSAPP_EMULATOR_URL'],
    [GatewayConfig, { WHATSAPP_EMULATOR_URL: 'http://127.0.0.1:4010', WHATSAPP_WEB_URL: 'ws://relay/ws/chat' }, 'WHATSAPP_EMULATOR_URL'],
    [
      GatewayConfig,
      { NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), WHATSAPP_EMULATOR_URL: 'http://127.0.0.1:4010' },
      'WHATSAPP_EMULATOR_URL',
    ],
    [ApiConfig, { WHATSAPP_EMULATOR_URL: 'ws://127.0.0.1:4010' }, 'WHATSAPP_EMULATOR_URL'],
    [
      ApiConfig,
      { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), WHATSAPP_EMULATOR_URL: 'http://127.0.0.1:4010' },
      'WHATSAPP_EMULATOR_URL',
    ],
    [DispatcherConfig, { DISPATCHER_CONCURRENCY: '0' }, 'DISPATCHER_CONCURRENCY'],
    [SimConfig, { NODE_ENV: 'production', SIM_TEST_PRELINK: 'true' }, 'SIM_TEST_PRELINK'],
  ] as const)('%p refuses %j naming the variable', (cls, env, variable) => {
    let error: unknown;
    try {
      loadConfig(cls as never, env as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as Error).message).toContain(variable);
  });

  describe('production refuses known placeholder secrets', () => {
    const realKey = Buffer.alloc(32, 9).toString('base64');
    const realJwt = 'a-real-secret-0f1e2d3c4b5a69788796a5b4c3d2e1f0';
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(ApiConfig, { NODE_ENV: 'production', ...env });
        return null;
      } catch (e) {
        return e as ConfigError;
      }
    };

    it.each([
      ['the k8s placeholder JWT_SECRET', { JWT_SECRET: 'change-me-to-at-least-32-random-characters', SECRET_ENCRYPTION_KEY: realKey }, 'JWT_SECRET'],
      ['the dev JWT_SECRET', { JWT_SECRET: 'dev-only-jwt-secret-change-me-0123456789abcdef', SECRET_ENCRYPTION_KEY: realKey }, 'JWT_SECRET'],
      ['any JWT_SECRET saying change me', { JWT_SECRET: 'please-CHANGEME-0123456789abcdef0123456789', SECRET_ENCRYPTION_KEY: realKey }, 'JWT_SECRET'],
      ['the k8s placeholder key', { JWT_SECRET: realJwt, SECRET_ENCRYPTION_KEY: 'change-me-32-bytes-base64=' }, 'SECRET_ENCRYPTION_KEY'],
      ['the dev key', { JWT_SECRET: realJwt, SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }, 'SECRET_ENCRYPTION_KEY'],
    ])('%s', (_what, env, variable) => {
      const error = refusal(env);
      expect(error).toBeInstanceOf(ConfigError);
      expect(error!.variable).toBe(variable);
      expect(error!.message).toContain('known placeholder');
    });

    it('lists the dev defaults and the k8s placeholders, and accepts real secrets and placeholders outside production', () => {
      expect(KNOWN_PLACEHOLDER_SECRETS).toEqual(expect.arrayContaining(['change-me-to-at-least-32-random-characters', 'change-me-32-bytes-base64=']));
      expect(refusal({ JWT_SECRET: realJwt, SECRET_ENCRYPTION_KEY: realKey })).toBeNull();
      expect(loadConfig(ApiConfig, { NODE_ENV: 'development', JWT_SECRET: 'change-me-to-at-least-32-random-characters' }).jwtSecret).toBe(
        'change-me-to-at-least-32-random-characters',
      );
    });
  });

  it('takes the three BOOTSTRAP_* values together or none, naming the missing one', () => {
    expect(loadConfig(CliConfig, {}).bootstrap).toBeNull();
    expect(loadConfig(CliConfig, { BOOTSTRAP_ORG_NAME: 'A', BOOTSTRAP_OWNER_EMAIL: 'a@b.c', BOOTSTRAP_OWNER_PASSWORD: 'long-enough' }).bootstrap).toEqual({
      name: 'A',
      ownerEmail: 'a@b.c',
      ownerPassword: 'long-enough',
    });
    expect(() => loadConfig(CliConfig, { BOOTSTRAP_ORG_NAME: 'A', BOOTSTRAP_OWNER_EMAIL: 'a@b.c' })).toThrow(
      'invalid configuration: BOOTSTRAP_OWNER_PASSWORD is required when BOOTSTRAP_ORG_NAME and BOOTSTRAP_OWNER_EMAIL are set',
    );
  });
});
