import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { BaseConfig, loadConfigOrExit } from '@app/config';
import type { PrincipalChange } from '@app/contracts';
import { dataSourceOptions, migrate } from '@app/database';
import { PrincipalChanges } from '@app/events';
import { GatewayDirectory } from '@app/fleet';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { AdminCommands, PrincipalAnnouncer, UsageError } from './admin.commands';

/** Admin CLI: JSON on stdout only; anything else goes to stderr. */
const USAGE = `usage: npm run -s cli -- <command> [--flag value …]
  migrate
  org:create --name <name> --owner-email <email> --owner-password <password>
  user:create --org <orgId> --email <email> --password <password> --role admin|member|viewer|owner
  user:delete --id <userId>
  user:role --id <userId> --role admin|member|viewer|owner
  apikey:create --org <orgId> --name <name> --permissions sessions:read,webhooks:manage|* [--platform-operator]
  apikey:permissions --id <keyId> --permissions sessions:read,…|* [--platform-operator]
  apikey:revoke --id <keyId>
  org:quota --org <orgId> [--sessions <n>|default] [--webhooks <n>|default] [--api-keys <n>|default]
  gateway:drain --id <gatewayId>
  openapi`;

function parseFlags(args: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else {
      const v = args[i + 1];
      // a flag without a value (`--platform-operator`) reads as ''; a required one is refused by need()
      if (v === undefined || v.startsWith('--')) flags[a.slice(2)] = '';
      else {
        flags[a.slice(2)] = v;
        i++;
      }
    }
  }
  return flags;
}

async function run(argv: string[]): Promise<unknown> {
  const [command, ...rest] = argv;
  const flags = parseFlags(rest);
  const config = loadConfigOrExit(BaseConfig);
  if (command === 'migrate') return { applied: await migrate(config.DATABASE_URL) };
  if (command === 'openapi') {
    // the document the running API serves at /api/docs-json; stdout must carry only the JSON
    await migrate(config.DATABASE_URL);
    const { createApiApp, buildOpenApiDocument } = await import('../../api/src/bootstrap');
    const app = await createApiApp({ quiet: true, logLevel: 'silent' });
    await app.init();
    const doc = buildOpenApiDocument(app);
    await app.close();
    return doc;
  }
  if (command === 'gateway:drain') return requestDrain(config, flags);
  const handlers: Record<string, (c: AdminCommands) => Promise<unknown>> = {
    'org:create': (c) => c.orgCreate(flags),
    'user:create': (c) => c.userCreate(flags),
    'user:delete': (c) => c.userDelete(flags),
    'user:role': (c) => c.userRole(flags),
    'apikey:create': (c) => c.apiKeyCreate(flags),
    'apikey:permissions': (c) => c.apiKeyPermissions(flags),
    'apikey:revoke': (c) => c.apiKeyRevoke(flags),
    'org:quota': (c) => c.orgQuota(flags),
  };
  const handler = handlers[command];
  if (!handler) throw new UsageError(command ? `unknown command ${command}` : 'no command given');
  await migrate(config.DATABASE_URL);
  const db = new DataSource(dataSourceOptions(config.DATABASE_URL, { extra: { max: 2 } }));
  await db.initialize();
  // Redis only for the commands that change a principal: the API replicas must hear of it at once
  let redis: Redis | null = null;
  const announcer: PrincipalAnnouncer = {
    announce: (change: PrincipalChange) => {
      redis ??= createRedis(config.REDIS_URL, { maxRetriesPerRequest: 3 });
      return new PrincipalChanges(redis, new RedisKeys(config.REDIS_KEY_PREFIX)).announce(change);
    },
  };
  try {
    return await handler(new AdminCommands(db, announcer, config));
  } finally {
    await db.destroy();
    (redis as Redis | null)?.disconnect();
  }
}

/** Asks a gateway to drain; it sees the request within a heartbeat, hands its sessions over and exits. */
async function requestDrain(config: BaseConfig, flags: Record<string, string>): Promise<unknown> {
  const gatewayId = flags.id;
  if (!gatewayId) throw new UsageError('gateway:drain needs --id <gatewayId>');
  const redis = createRedis(config.REDIS_URL);
  try {
    if (!(await new GatewayDirectory(redis, new RedisKeys(config.REDIS_KEY_PREFIX)).requestDrain(gatewayId))) {
      throw new Error(`no gateway ${gatewayId} is registered`);
    }
    return { gatewayId, drainRequested: true };
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

run(process.argv.slice(2)).then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    process.exit(0);
  },
  (err) => {
    if (err instanceof UsageError) process.stderr.write(`error: ${err.message}\n${USAGE}\n`);
    else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
