import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';

export class ConfigError extends Error {
  constructor(readonly variable: string, reason: string) {
    super(`invalid configuration: ${variable} ${reason}`);
    this.name = 'ConfigError';
  }
}

/** Values a caller decides in code, taking precedence over the environment (the CLI silencing the API it boots). */
export type ConfigOverrides = Record<string, string>;

function firstConstraint(error: ValidationError): string {
  const constraints = error.constraints ?? {};
  return Object.values(constraints)[0]?.replace(new RegExp(`^${error.property}\\s*`), '') ?? 'is invalid';
}

/**
 * Validates environment variables into a typed config object, once, at boot.
 * Nothing else in the codebase reads process.env.
 */
export function loadConfig<T extends object>(cls: new () => T, env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): T {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries({ ...env, ...overrides })) {
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const instance = plainToInstance(cls, raw, { enableImplicitConversion: false, exposeDefaultValues: true });
  const errors = validateSync(instance as object, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) {
    const e = errors[0];
    throw new ConfigError(e.property, firstConstraint(e));
  }
  const finalize = (instance as { finalize?: () => void }).finalize;
  if (typeof finalize === 'function') finalize.call(instance);
  return instance;
}

/** Boot helper: a bad value stops the process with one line naming the variable. */
export function loadConfigOrExit<T extends object>(cls: new () => T, env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): T {
  try {
    return loadConfig(cls, env, overrides);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}
