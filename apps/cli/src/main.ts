import 'reflect-metadata';
import { CliConfig, loadConfigOrExit } from '@app/config';
import type { PrincipalChange } from '@app/contracts';
import { Db, migrate, poolSettings } from '@app/database';
import { PrincipalChanges } from '@app/events';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { AdminCommands, PrincipalAnnouncer } from './admin.commands';
import { commandHelp, overviewHelp, parseFlags, UsageError, wantsHelp } from './command-table';
import { COMMANDS } from './commands';
import { useRunningStack } from './running-stack';

/** Admin CLI: JSON on stdout only (help text too goes to stdout, asked for); anything else goes to stderr. */
async function run(argv: string[]): Promise<unknown> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || wantsHelp([name])) return help(overviewHelp(COMMANDS));
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command ${name}`);
  if (wantsHelp(rest)) return help(commandHelp(command));
  const flags = parseFlags(command, rest);
  // beside `npm start` / `npm run demo`, and no DATABASE_URL given: the database (and Redis) their apps use
  const stack = useRunningStack(process.env);
  if (stack) process.stderr.write(`using the database of the running ${stack.demo ? 'npm run demo' : 'npm start'} (pid ${stack.pid}); set DATABASE_URL for another\n`);
  const config = loadConfigOrExit(CliConfig);
  let db: Db | null = null;
  // Redis only for the commands that change a principal or ask a gateway to drain
  let redis: Redis | null = null;
  const connectRedis = (): Redis => (redis ??= createRedis(config.REDIS_URL, { maxRetriesPerRequest: 3 }));
  const announcer: PrincipalAnnouncer = {
    // the API replicas must hear of a revocation or a role change at once
    announce: (change: PrincipalChange) => new PrincipalChanges(connectRedis(), new RedisKeys(config.REDIS_KEY_PREFIX)).announce(change),
  };
  const admin = async () => {
    await migrate(config.DATABASE_URL);
    db = Db.open(poolSettings(config.DATABASE_URL, { max: 2 }));
    return new AdminCommands(db, announcer, config);
  };
  try {
    return await command.run(flags, { config, admin, redis: connectRedis });
  } finally {
    await (db as Db | null)?.close();
    (redis as Redis | null)?.disconnect();
  }
}

const HELP = Symbol('help');
function help(text: string): { [HELP]: string } {
  return { [HELP]: text };
}

run(process.argv.slice(2)).then(
  (out) => {
    const text = out && typeof out === 'object' && HELP in out ? (out as { [HELP]: string })[HELP] : `${JSON.stringify(out, null, 2)}\n`;
    process.stdout.write(text);
    process.exit(0);
  },
  (err) => {
    if (err instanceof UsageError) {
      const command = COMMANDS.find((c) => c.name === process.argv[2]);
      process.stderr.write(`error: ${err.message}\n${command ? commandHelp(command) : overviewHelp(COMMANDS)}`);
    } else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
