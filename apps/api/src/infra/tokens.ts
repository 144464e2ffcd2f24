/** DI token of the shared ioredis client. */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
