import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_STATUS, ErrorCode } from '@app/contracts';
import { errorResponse } from './api-docs';

/**
 * What the generated document needs before tools no one here wrote can trust it (issue 22):
 *
 * - OpenAPI 3.1 (JSON Schema 2020-12). @nestjs/swagger writes 3.0 with `nullable: true` beside an `allOf` `$ref`,
 *   which admits no null under 3.0's rules (nullable only widens a `type` in the same schema object), so Ajv and
 *   openapi-response-validator refuse every Message. In 3.1 a nullable field is `type: [T, 'null']` and a nullable
 *   reference `oneOf: [{$ref}, {type: 'null'}]`: plain JSON Schema, which any validator (Ajv2020), linter and
 *   generator (openapi-typescript) reads the same way, without an OpenAPI dialect.
 * - The errors HTTP itself can answer on any operation (unreadable request, body too large, URL or headers too long,
 *   refused input, rate limit, unexpected failure), as shared responses under `components.responses`.
 */
export function completeOpenApiDocument(doc: OpenAPIObject): OpenAPIObject {
  const out = JSON.parse(JSON.stringify(doc)) as OpenAPIObject & Record<string, unknown>;
  out.openapi = '3.1.0';
  forEachSchema(out, toJsonSchema2020);
  addTransportErrors(out);
  return out;
}

type Schema = Record<string, unknown>;

/** Every schema object of the document, nested ones included, visited once. */
function forEachSchema(doc: OpenAPIObject, visit: (schema: Schema) => void): void {
  const walk = (schema: unknown): void => {
    if (!schema || typeof schema !== 'object') return;
    const s = schema as Schema;
    for (const key of ['items', 'additionalProperties', 'not']) walk(s[key]);
    for (const key of ['allOf', 'oneOf', 'anyOf']) if (Array.isArray(s[key])) (s[key] as unknown[]).forEach(walk);
    if (s.properties) Object.values(s.properties as Record<string, unknown>).forEach(walk);
    visit(s);
  };
  Object.values(doc.components?.schemas ?? {}).forEach(walk);
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item as Record<string, Schema>)) {
      if (!op || typeof op !== 'object') continue;
      for (const p of (op.parameters as Schema[] | undefined) ?? []) walk(p.schema);
      const bodies = [op.requestBody, ...Object.values((op.responses as Record<string, unknown>) ?? {})] as Array<{ content?: Record<string, Schema> } | undefined>;
      for (const body of bodies) for (const media of Object.values(body?.content ?? {})) walk(media.schema);
    }
  }
}

/** One schema object from OpenAPI 3.0's dialect to JSON Schema 2020-12, in place. */
function toJsonSchema2020(s: Schema): void {
  if (s.example !== undefined) {
    s.examples = [s.example];
    delete s.example;
  }
  if (s.nullable !== true) {
    delete s.nullable;
    return;
  }
  delete s.nullable;
  const refs = Array.isArray(s.allOf) && s.allOf.length === 1 ? (s.allOf as Schema[]) : s.$ref ? [{ $ref: s.$ref }] : null;
  if (refs) {
    delete s.allOf;
    delete s.$ref;
    delete s.type;
    s.oneOf = [refs[0], { type: 'null' }];
    return;
  }
  if (typeof s.type === 'string') s.type = [s.type, 'null'];
  if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
}

/** Answers that do not depend on the operation: HTTP the server cannot read, hardening, limits, failures. */
const TRANSPORT_ERRORS: ErrorCode[] = ['bad_request', 'payload_too_large', 'uri_too_long', 'unsupported_media_type', 'validation_error', 'headers_too_large', 'internal'];
/** Beside those: the rate limit counts every route but the probes; credentials are checked on every route not public. */
const PROBES = new Set(['/healthz', '/readyz']);

function addTransportErrors(doc: OpenAPIObject): void {
  const responses = (doc.components!.responses ??= {});
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const op of Object.values(item as Record<string, { responses?: Record<string, unknown>; security?: unknown[] }>)) {
      if (!op?.responses) continue;
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      const codes = [...TRANSPORT_ERRORS, ...(PROBES.has(path) ? [] : ['rate_limited' as const]), ...(isPublic ? [] : ['unauthorized' as const])];
      for (const code of codes) {
        const status = String(ERROR_STATUS[code]);
        if (op.responses[status]) continue;
        responses[responseName(code)] ??= errorResponse(code);
        op.responses[status] = { $ref: `#/components/responses/${responseName(code)}` };
      }
      op.responses = Object.fromEntries(Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
}

/** `payload_too_large` → `PayloadTooLarge`. */
const responseName = (code: ErrorCode) => code.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());
