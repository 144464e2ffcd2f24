import type { NestExpressApplication } from '@nestjs/platform-express';
import type { ConfigOverrides } from '@app/config';
import request from 'supertest';
import { createApiApp } from '../../apps/api/src/bootstrap';
import { ApiOpsServer } from '../../apps/api/src/health/api-ops-server';

/**
 * The real API application in-process (real PostgreSQL + Redis of the run), for supertest; `overrides` over the env.
 * `ops()` reaches its ops port (health, metrics); support/env.ts lets the OS choose it.
 */
export async function startApi(
  overrides: ConfigOverrides = {},
): Promise<{ app: NestExpressApplication; http: () => ReturnType<typeof request>; ops: () => ReturnType<typeof request> }> {
  const app = await createApiApp({ overrides });
  await app.init();
  const opsUrl = `http://127.0.0.1:${app.get(ApiOpsServer).port}`;
  return { app, http: () => request(app.getHttpServer()), ops: () => request(opsUrl) };
}
