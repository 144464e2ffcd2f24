import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { REPO_ROOT } from './support/run-context';

/**
 * The Docker quickstart, checked without a Docker engine (none on CI): the compose file parsed as YAML, with its
 * anchors and merge keys resolved as compose resolves them, and the Dockerfile read as text.
 */
interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  init?: boolean;
  ports?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  restart?: string;
}

const compose = load(readFileSync(join(REPO_ROOT, 'docker/compose.yml'), 'utf8'), { schema: CORE_SCHEMA.withTags(mergeTag) }) as { services: Record<string, Service> };
const dockerfile = readFileSync(join(REPO_ROOT, 'docker/Dockerfile'), 'utf8');
const services = compose.services;
const APPS = ['migrate', 'api', 'gateway', 'dispatcher'];

describe('docker/compose.yml', () => {
  it('brings PostgreSQL, Redis, migrations, the API, a gateway and the dispatcher', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'dispatcher', 'gateway', 'migrate', 'postgres', 'redis']);
    expect(services.api.command).toEqual(['node', 'dist/apps/api/src/main.js']);
    expect(services.gateway.command).toEqual(['node', 'dist/apps/gateway/src/main.js']);
    expect(services.dispatcher.command).toEqual(['node', 'dist/apps/webhook-dispatcher/src/main.js']);
    expect(services.migrate.command!.join(' ')).toMatch(/cli\/src\/main\.js migrate && .*cli\/src\/main\.js bootstrap/);
    expect(services.migrate.restart).toBe('no');
  });

  it('runs every service under an init process', () => {
    for (const [name, service] of Object.entries(services)) expect([name, service.init]).toEqual([name, true]);
  });

  it('health-checks every long-running service (the apps on /readyz through the image script)', () => {
    expect(services.postgres.healthcheck!.test).toEqual(expect.arrayContaining(['pg_isready']));
    expect(services.redis.healthcheck!.test).toEqual(['CMD', 'redis-cli', 'ping']);
    for (const app of ['api', 'gateway', 'dispatcher']) {
      expect([app, services[app].healthcheck!.test]).toEqual([app, ['CMD', 'node', 'docker/healthcheck.js', '/readyz']]);
    }
    // the one-shot job exits; its probe is off on purpose
    expect(services.migrate.healthcheck).toEqual({ disable: true });
  });

  it('starts the apps after healthy stores and completed migrations', () => {
    for (const app of ['api', 'gateway', 'dispatcher']) {
      expect([app, services[app].depends_on]).toEqual([
        app,
        {
          migrate: { condition: 'service_completed_successfully' },
          postgres: { condition: 'service_healthy' },
          redis: { condition: 'service_healthy' },
        },
      ]);
    }
    expect(services.migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  });

  it('publishes the API port only, and lets receivers on the compose network through the SSRF guard', () => {
    expect(services.api.ports).toEqual(['${PORT:-3000}:3000']);
    for (const name of ['postgres', 'redis', 'gateway', 'dispatcher', 'migrate']) expect([name, services[name].ports]).toEqual([name, undefined]);
    for (const app of APPS) {
      expect(services[app].environment).toMatchObject({
        NODE_ENV: 'production',
        DATABASE_URL: 'postgres://postgres:postgres@postgres:5432/gateway',
        REDIS_URL: 'redis://redis:6379',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: '${WEBHOOK_ALLOW_PRIVATE_TARGETS:-true}',
      });
      // secrets are required from the environment, never defaulted to a placeholder
      expect(services[app].environment!.JWT_SECRET).toMatch(/^\$\{JWT_SECRET:\?/);
      expect(services[app].environment!.SECRET_ENCRYPTION_KEY).toMatch(/^\$\{SECRET_ENCRYPTION_KEY:\?/);
    }
    expect(services.gateway.environment!.GATEWAY_ID).toBe('gateway-1');
    // the ops ports bind to loopback by default: in a container the probes and scrapers come from outside it
    for (const app of ['api', 'gateway', 'dispatcher']) expect([app, services[app].environment!.OPS_HOST]).toEqual([app, '0.0.0.0']);
    expect(Object.keys(services.migrate.environment!)).toEqual(expect.arrayContaining(['BOOTSTRAP_ORG_NAME', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD']));
  });
});

describe('docker/Dockerfile', () => {
  it('starts with the syntax line (BuildKit reads it only there)', () => {
    expect(dockerfile.split('\n')[0]).toMatch(/^# syntax=docker\/dockerfile:1(\.\d+)?$/);
  });

  it('has a HEALTHCHECK running the script it copies into the image, as a non-root user', () => {
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "docker\/healthcheck\.js"\]$/m);
    expect(dockerfile).toMatch(/^COPY .*docker\/healthcheck\.js \.\/docker\/healthcheck\.js$/m);
    expect(dockerfile).toMatch(/^USER app$/m);
  });
});
