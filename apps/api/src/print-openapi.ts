/*
 * `npm run openapi`: prints the OpenAPI document the API serves at /api/docs-json (stdout carries only the JSON), from
 * the API's own modules. It lives in the API app, not the admin CLI: an app never imports another app.
 */
import { ApiConfig, loadConfigOrExit } from '@app/config';
import { migrate } from '@app/database';
import { buildOpenApiDocument, createApiApp } from './bootstrap';

async function main(): Promise<void> {
  const config = loadConfigOrExit(ApiConfig);
  await migrate(config.DATABASE_URL);
  const app = await createApiApp({ quiet: true, logLevel: 'silent' });
  await app.init();
  const doc = buildOpenApiDocument(app);
  await app.close();
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(`openapi failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
