/**
 * The CLI's commands as data: name, summary, options and handler. `--help` (and `<command> --help`) is generated
 * from this table, and the argument parser checks flags against it, so a command added to the table is documented
 * and parsed with no other change.
 */

export class UsageError extends Error {}

export interface CliOption {
  /** without the leading `--` */
  name: string;
  /** placeholder shown in help, e.g. `<orgId>`; absent for a switch (`--with-key`), which takes no value */
  value?: string;
  summary: string;
  required?: boolean;
}

export type Flags = Record<string, string>;

export interface CliCommand<Ctx> {
  name: string;
  summary: string;
  options: CliOption[];
  /** an example line shown in `<command> --help` */
  example?: string;
  run(flags: Flags, ctx: Ctx): Promise<unknown>;
}

const HELP_FLAGS = new Set(['--help', '-h']);

export function wantsHelp(args: string[]): boolean {
  return args.some((a) => HELP_FLAGS.has(a));
}

/** `--name value`, `--name=value`, and switches (`--with-key`, set to "true"); unknown or valueless options are refused. */
export function parseFlags(command: CliCommand<unknown>, args: string[]): Flags {
  const known = new Map(command.options.map((o) => [o.name, o]));
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const option = known.get(name);
    if (!option) throw new UsageError(`${command.name} has no option --${name}`);
    if (!option.value) {
      flags[name] = eq > 0 ? arg.slice(eq + 1) : 'true';
      continue;
    }
    if (eq > 0) {
      flags[name] = arg.slice(eq + 1);
      continue;
    }
    const value = args[i + 1];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
    flags[name] = value;
    i++;
  }
  for (const option of command.options) {
    if (option.required && (flags[option.name] === undefined || flags[option.name] === '')) throw new UsageError(`--${option.name} is required`);
  }
  return flags;
}

const optionUsage = (o: CliOption) => {
  const text = o.value ? `--${o.name} ${o.value}` : `--${o.name}`;
  return o.required ? text : `[${text}]`;
};

/** `cli --help`: every command with its summary. */
export function overviewHelp(commands: CliCommand<unknown>[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: npm run -s cli -- <command> [--option value …]',
    '       npm run -s cli -- <command> --help',
    '',
    'Prints JSON on stdout; logs and errors go to stderr.',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
  ].join('\n');
}

/** `<command> --help`: its usage line, options and example. */
export function commandHelp(command: CliCommand<unknown>): string {
  const width = Math.max(0, ...command.options.map((o) => optionUsage(o).length));
  return [
    `usage: npm run -s cli -- ${[command.name, ...command.options.map(optionUsage)].join(' ')}`,
    '',
    command.summary,
    ...(command.options.length ? ['', 'options:', ...command.options.map((o) => `  ${optionUsage(o).padEnd(width)}  ${o.summary}`)] : []),
    ...(command.example ? ['', 'example:', `  ${command.example}`] : []),
    '',
  ].join('\n');
}
