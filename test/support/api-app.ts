import type { NestExpressApplication } from '@nestjs/platform-express';
import type { ConfigOverrides } from '@app/config';
import request, { Response } from 'supertest';
import { createApiApp } from '../../apps/api/src/bootstrap';
import { ApiOpsServer } from '../../apps/api/src/health/api-ops-server';
import { committedDocumentValidator } from './openapi-response-validator';

type Agent = ReturnType<typeof request>;
const VERBS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/**
 * The real API application in-process (real PostgreSQL + Redis of the run), for supertest; `overrides` over the env.
 * Every answer `http()` receives is checked against docs/openapi.json (status documented for its operation, content
 * type and JSON body as the document says): a mismatch fails the test that made the request.
 * `ops()` reaches its ops port (health, metrics); support/env.ts lets the OS choose it.
 */
export async function startApi(overrides: ConfigOverrides = {}): Promise<{ app: NestExpressApplication; http: () => Agent; ops: () => Agent }> {
  const app = await createApiApp({ overrides });
  await app.init();
  const opsUrl = `http://127.0.0.1:${app.get(ApiOpsServer).port}`;
  return { app, http: () => checkedRequest(app.getHttpServer()), ops: () => request(opsUrl) };
}

/** supertest's `request(app or url)`, every answer checked against docs/openapi.json as `startApi().http()` does. */
export function checkedRequest(target: Parameters<typeof request>[0]): Agent {
  return checkedAgainstDocument(request(target));
}

/** The agent, with the document's check added to every request it makes (run with the test's own `expect`s). */
export function checkedAgainstDocument(agent: Agent): Agent {
  const validator = committedDocumentValidator();
  return new Proxy(agent, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof name !== 'string' || !VERBS.has(name) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => request.Test).apply(target, args);
        return test.expect((res: Response) => {
          const req = (res as unknown as { req: { method: string; path: string } }).req;
          const problems = validator.check(req.method, req.path, res.status, res.headers['content-type'], res.body, bodyLength(res));
          if (problems.length) throw new Error(`the answer does not match docs/openapi.json:\n  ${problems.join('\n  ')}`);
        });
      };
    },
  });
}

function bodyLength(res: Response): number {
  const declared = res.headers['content-length'];
  if (declared !== undefined) return Number(declared);
  if (Buffer.isBuffer(res.body)) return res.body.length;
  return typeof res.text === 'string' ? res.text.length : 0;
}
