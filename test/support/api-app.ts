import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createApiApp } from '../../apps/api/src/bootstrap';

/** The real API application in-process (real PostgreSQL + Redis of the run), for supertest. */
export async function startApi(): Promise<{ app: NestExpressApplication; http: () => ReturnType<typeof request> }> {
  const app = await createApiApp();
  await app.init();
  return { app, http: () => request(app.getHttpServer()) };
}
