/**
 * Whether an error means PostgreSQL or Redis cannot be reached right now (down, restarting, starting up, the
 * connection cut, a fail-fast client giving up), as opposed to a statement or command the store refused. The API
 * answers the first with 503 `unavailable` and Retry-After; the second stays a bug (500) or whatever it maps to.
 * The one list of what node-postgres, its pool, TypeORM and ioredis throw when their server is gone.
 */

/** SQLSTATEs of a server going away or not there yet: class 08 (connection exception), admin/crash shutdown, starting up. */
const PG_UNREACHABLE_SQLSTATE = /^(08...|57P01|57P02|57P03)$/;

/** Socket-level failures to reach a server, PostgreSQL or Redis alike. */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Messages without a code: node-postgres and pg-pool, then ioredis (closed, fail-fast queue refusals, timeouts). */
const UNREACHABLE_MESSAGE_PREFIXES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Connection is closed.',
  "Stream isn't writeable and enableOfflineQueue options is false",
  'Command timed out',
  'Reached the max retries per request limit',
  'LOADING ',
];

const UNREACHABLE_ERROR_NAMES: ReadonlySet<string> = new Set(['MaxRetriesPerRequestError']);

type ErrorLike = { code?: unknown; message?: unknown; name?: unknown };

/** The error and those it wraps: TypeORM's `driverError`, `cause`, an AggregateError's members (IPv4 and IPv6 tries). */
function* chain(err: unknown, depth = 0): Generator<ErrorLike> {
  if (!err || typeof err !== 'object' || depth > 4) return;
  const e = err as { driverError?: unknown; cause?: unknown; errors?: unknown };
  yield err as ErrorLike;
  if (e.driverError) yield* chain(e.driverError, depth + 1);
  if (e.cause) yield* chain(e.cause, depth + 1);
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* chain(inner, depth + 1);
}

export function isStoreUnreachable(err: unknown): boolean {
  for (const e of chain(err)) {
    if (typeof e.code === 'string' && (PG_UNREACHABLE_SQLSTATE.test(e.code) || NETWORK_ERROR_CODES.has(e.code))) return true;
    if (typeof e.name === 'string' && UNREACHABLE_ERROR_NAMES.has(e.name)) return true;
    const message = e.message;
    if (typeof message === 'string' && UNREACHABLE_MESSAGE_PREFIXES.some((p) => message.startsWith(p))) return true;
  }
  return false;
}
