import type { NestExpressApplication } from '@nestjs/platform-express';
import type { ConfigOverrides } from '@app/config';
import request from 'supertest';
import { createApiApp } from '../../apps/api/src/bootstrap';

/** The real API application in-process (real PostgreSQL + Redis of the run), for supertest; `overrides` over the env. */
export async function startApi(overrides: ConfigOverrides = {}): Promise<{ app: NestExpressApplication; http: () => ReturnType<typeof request> }> {
  const app = await createApiApp({ overrides });
  await app.init();
  return { app, http: () => request(app.getHttpServer()) };
}
