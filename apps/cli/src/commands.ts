import type { CliConfig } from '@app/config';
import { migrate } from '@app/database';
import { GatewayDirectory } from '@app/fleet';
import { Redis, RedisKeys } from '@app/redis';
import type { AdminCommands } from './admin.commands';
import { CliCommand, UsageError } from './command-table';

export interface CliContext {
  config: CliConfig;
  /** the database, migrated, opened on first use and closed by main */
  admin(): Promise<AdminCommands>;
  /** a Redis connection, opened on first use and closed by main */
  redis(): Redis;
}

const PERMISSION_LIST = 'sessions:read,sessions:write,groups:write,messages:send,webhooks:manage or *';

/** Every command of the CLI; `--help` lists them in this order. */
export const COMMANDS: CliCommand<CliContext>[] = [
  {
    name: 'migrate',
    summary: 'apply pending database migrations (idempotent)',
    options: [],
    run: async (_flags, { config }) => ({ applied: await migrate(config.DATABASE_URL) }),
  },
  {
    name: 'bootstrap',
    summary: 'create the organization named by BOOTSTRAP_ORG_NAME/_OWNER_EMAIL/_OWNER_PASSWORD once, with a first API key',
    options: [],
    example: "BOOTSTRAP_ORG_NAME=Acme BOOTSTRAP_OWNER_EMAIL=owner@acme.test BOOTSTRAP_OWNER_PASSWORD='long pw' npm run -s cli -- bootstrap",
    run: async (_flags, { config, admin }) => {
      const wanted = config.bootstrap;
      if (!wanted) return { bootstrapped: false, reason: 'BOOTSTRAP_ORG_NAME is not set' };
      return (await admin()).bootstrap(wanted);
    },
  },
  {
    name: 'org:create',
    summary: 'create an organization and its owner (with --with-key, a first API key too)',
    options: [
      { name: 'name', value: '<name>', summary: 'organization name', required: true },
      { name: 'owner-email', value: '<email>', summary: "the owner's login", required: true },
      { name: 'owner-password', value: '<password>', summary: 'at least 8 characters', required: true },
      { name: 'with-key', summary: 'also create an API key with every permission (`*`); its token is printed once' },
      { name: 'key-name', value: '<name>', summary: 'name of that key (default "first key")' },
    ],
    example: "npm run -s cli -- org:create --name Acme --owner-email owner@acme.test --owner-password 'long pw' --with-key",
    run: async (flags, { admin }) => (await admin()).orgCreate(flags),
  },
  {
    name: 'org:list',
    summary: 'list organizations (id, name, createdAt)',
    options: [],
    run: async (_flags, { admin }) => (await admin()).orgList(),
  },
  {
    name: 'user:create',
    summary: 'add a user to an organization',
    options: [
      { name: 'org', value: '<orgId>', summary: 'organization id (see org:list)', required: true },
      { name: 'email', value: '<email>', summary: 'login', required: true },
      { name: 'password', value: '<password>', summary: 'at least 8 characters', required: true },
      { name: 'role', value: 'owner|admin|member|viewer', summary: 'what the user may do', required: true },
    ],
    run: async (flags, { admin }) => (await admin()).userCreate(flags),
  },
  {
    name: 'user:delete',
    summary: 'delete a user (their logins stop working at once)',
    options: [{ name: 'id', value: '<userId>', summary: 'user id', required: true }],
    run: async (flags, { admin }) => (await admin()).userDelete(flags),
  },
  {
    name: 'user:role',
    summary: "change a user's role (every API replica applies it at once)",
    options: [
      { name: 'id', value: '<userId>', summary: 'user id', required: true },
      { name: 'role', value: 'owner|admin|member|viewer', summary: 'the new role', required: true },
    ],
    run: async (flags, { admin }) => (await admin()).userRole(flags),
  },
  {
    name: 'apikey:create',
    summary: 'create an API key; its token is printed once and never stored',
    options: [
      { name: 'org', value: '<orgId>', summary: 'organization id (see org:list)', required: true },
      { name: 'name', value: '<name>', summary: 'to recognise the key in apikey:list', required: true },
      { name: 'permissions', value: '<list>', summary: `comma list of ${PERMISSION_LIST}`, required: true },
      { name: 'platform-operator', summary: 'also grant platform:operate (the fleet-wide GET /gateways); `*` never includes it' },
    ],
    example: 'npm run -s cli -- apikey:create --org org_… --name ci --permissions sessions:read,webhooks:manage',
    run: async (flags, { admin }) => (await admin()).apiKeyCreate(flags),
  },
  {
    name: 'apikey:permissions',
    summary: "replace a key's permissions (every API replica applies it at once)",
    options: [
      { name: 'id', value: '<keyId>', summary: 'key id (see apikey:list)', required: true },
      { name: 'permissions', value: '<list>', summary: `comma list of ${PERMISSION_LIST}`, required: true },
      { name: 'platform-operator', summary: 'keep or grant platform:operate' },
    ],
    run: async (flags, { admin }) => (await admin()).apiKeyPermissions(flags),
  },
  {
    name: 'apikey:list',
    summary: "list an organization's API keys (ids, names, permissions, token hint; never the token)",
    options: [{ name: 'org', value: '<orgId>', summary: 'organization id (see org:list)', required: true }],
    run: async (flags, { admin }) => (await admin()).apiKeyList(flags),
  },
  {
    name: 'apikey:revoke',
    summary: 'revoke an API key (401 at once)',
    options: [{ name: 'id', value: '<keyId>', summary: 'key id (see apikey:list)', required: true }],
    run: async (flags, { admin }) => (await admin()).apiKeyRevoke(flags),
  },
  {
    name: 'org:quota',
    summary: "set an organization's quotas (`default` puts one back to the deployment's default)",
    options: [
      { name: 'org', value: '<orgId>', summary: 'organization id (see org:list)', required: true },
      { name: 'sessions', value: '<n>|default', summary: 'sessions it may hold' },
      { name: 'webhooks', value: '<n>|default', summary: 'webhooks it may register' },
      { name: 'api-keys', value: '<n>|default', summary: 'unrevoked API keys it may hold' },
    ],
    run: async (flags, { admin }) => (await admin()).orgQuota(flags),
  },
  {
    name: 'gateway:drain',
    summary: 'ask a gateway to drain: it stops taking sessions, hands each one over, then exits',
    options: [{ name: 'id', value: '<gatewayId>', summary: 'gateway id (GET /api/v1/gateways)', required: true }],
    run: async (flags, { config, redis }) => {
      const gatewayId = flags.id;
      if (!(await new GatewayDirectory(redis(), new RedisKeys(config.REDIS_KEY_PREFIX)).requestDrain(gatewayId))) {
        throw new UsageError(`no gateway ${gatewayId} is registered`);
      }
      return { gatewayId, drainRequested: true };
    },
  },
];
