/**
 * The typed client of the API, generated from the committed document (docs/openapi.json) by openapi-typescript and
 * driven by openapi-fetch: a path, a body or a response field the document does not have is a compile error.
 * `openapi.ts` is generated (`npm run openapi` rewrites it with the document); nothing here is written by hand but
 * this file. Used by the dashboard (apps/dashboard) and by test/api-client.e2e-spec.ts, which drives every operation.
 */
import createClient, { type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './openapi';

export type { components, operations, paths };
export type Schemas = components['schemas'];
export type ApiClient = ReturnType<typeof createClient<paths>>;

/** A client of the API at `baseUrl` (an origin; the paths carry `/api/v1`). */
export function createApiClient(baseUrl: string, options: Omit<ClientOptions, 'baseUrl'> = {}): ApiClient {
  return createClient<paths>({ baseUrl, ...options });
}
