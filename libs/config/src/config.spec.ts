import { ApiConfig, DispatcherConfig, GatewayConfig } from './config';
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
    [ApiConfig, { SECRET_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'SECRET_ENCRYPTION_KEY'],
    [ApiConfig, { JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [ApiConfig, { NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }, 'JWT_SECRET'],
    [ApiConfig, { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40) }, 'SECRET_ENCRYPTION_KEY'],
    [GatewayConfig, { GATEWAY_ENGINE: 'whatsmeow' }, 'GATEWAY_ENGINE'],
    [GatewayConfig, { GATEWAY_ID: 'has spaces' }, 'GATEWAY_ID'],
    [DispatcherConfig, { DISPATCHER_CONCURRENCY: '0' }, 'DISPATCHER_CONCURRENCY'],
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
});
