import type { Request } from 'express';
import { DomainError } from '@app/contracts';
import { MAX_URL_LENGTH } from './client-error';

/** Deeper JSON than this is refused before validation, whose recursion a few thousand levels overflow. */
export const MAX_JSON_DEPTH = 32;

/**
 * Keys a JSON object may hold that the body transform silently turns into prototype changes or drops, so the
 * client would get a 2xx for a field that was never stored.
 */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface InputProblem {
  /** the field path, as validation errors name it (`customHeaders.__proto__`), or `body` / `path` */
  field: string;
  message: string;
}

const NUL_MESSAGE = 'must not contain NUL characters (PostgreSQL text cannot hold them)';
const SURROGATE_MESSAGE = 'must be well-formed Unicode: a lone UTF-16 surrogate (\\uD800-\\uDFFF unpaired) cannot be stored';

/** ES2024's String.prototype.isWellFormed (Node 20); the ES2022 lib does not declare it. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Why PostgreSQL would refuse this string in text or json (it then answers with an error the client caused), or null. */
function stringProblem(s: string): string | null {
  if (s.includes('\0')) return NUL_MESSAGE;
  return isWellFormed(s) ? null : SURROGATE_MESSAGE;
}

/**
 * The first part of a parsed JSON value no handler should see: a NUL or a lone UTF-16 surrogate in a string or a key
 * (PostgreSQL text and json cannot store either: the insert would fail as a 500), a prototype-named key, or nesting deeper than MAX_JSON_DEPTH. Walks with its own stack, so a deep
 * value cannot overflow the call stack here either. One check for every route, rather than one per DTO field.
 */
export function jsonInputProblem(value: unknown, root = ''): InputProblem | null {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 0 }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    const field = next.path || 'body';
    if (typeof next.value === 'string') {
      const message = stringProblem(next.value);
      if (message) return { field, message };
      continue;
    }
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.depth >= MAX_JSON_DEPTH) return { field, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` };
    const isArray = Array.isArray(next.value);
    for (const [key, child] of Object.entries(next.value)) {
      if (!isArray) {
        const keyProblem = stringProblem(key);
        if (keyProblem) return { field, message: `keys ${keyProblem}` };
        if (PROTOTYPE_KEYS.has(key)) return { field: next.path ? `${next.path}.${key}` : key, message: `key "${key}" is not allowed` };
      }
      pending.push({ value: child, path: next.path ? `${next.path}.${key}` : key, depth: next.depth + 1 });
    }
  }
  return null;
}

/** A path segment with a NUL or undecodable percent-encoding could only reach PostgreSQL as a failing id. */
export function pathProblem(rawPath: string): InputProblem | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return { field: 'path', message: 'must be valid percent-encoded UTF-8' };
  }
  return decoded.includes('\0') ? { field: 'path', message: NUL_MESSAGE } : null;
}

/**
 * What of a request (path, query, parsed body) is refused before any route sees it. Express 5 parses `req.query` anew
 * on every read, so a URL without a query string (most requests) does not ask for it: it would be `{}`.
 */
export function requestInputProblem(req: Pick<Request, 'originalUrl' | 'query' | 'body'>): InputProblem | null {
  const queryAt = req.originalUrl.indexOf('?');
  const path = queryAt < 0 ? req.originalUrl : req.originalUrl.slice(0, queryAt);
  return pathProblem(path) ?? (queryAt < 0 ? null : jsonInputProblem(req.query)) ?? (req.body === undefined ? null : jsonInputProblem(req.body));
}

/**
 * What the API's prelude (mounted after the body parsers, before every route) refuses: a 422 `validation_error`
 * naming the field (414 for an over-long URL), or null. Nothing behind a refusal runs.
 */
export function inputRefusal(req: Request): DomainError | null {
  if (req.originalUrl.length > MAX_URL_LENGTH) return new DomainError('uri_too_long', `request URL is longer than ${MAX_URL_LENGTH} bytes`);
  const problem = requestInputProblem(req);
  return problem ? new DomainError('validation_error', 'request is invalid', { fields: { [problem.field]: [problem.message] } }) : null;
}
