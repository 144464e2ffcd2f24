/** DI token of the process's shared ioredis client (commands only; blocking readers and subscribers open their own). */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
/** DI token of the process's pino logger. */
export const LOGGER = Symbol('LOGGER');
