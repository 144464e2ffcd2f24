import 'reflect-metadata';
import { INestApplication, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import compression from 'compression';
import { json, Router } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import { ApiConfig, ConfigOverrides } from '@app/config';
import { EVENT_TYPES } from '@app/contracts';
import { randomUlid } from '@app/crypto';
import { createLogger, Logger, PinoNestLogger, requestLogger } from '@app/observability';
import { AppModule } from './app.module';
import { apiPrelude } from './common/api-prelude';
import { answerClientError } from './common/client-error';
import { ErrorEnvelopeFilter } from './common/error.filter';
import { jsonBodyOptions } from './common/json-body';
import { RequestBodyGuard } from './common/request-body.guard';
import { ApiMetrics } from './common/http-metrics';
import { completeOpenApiDocument } from './common/openapi-document';
import { ApiValidationPipe } from './common/validation.pipe';
import { RateLimitMiddleware } from './limits/rate-limit.middleware';

export const API_PREFIX = 'api/v1';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a caller's X-Request-Id when it is sane, otherwise mints one; always returned as a header. */
function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUlid();
  res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * The configured API application (filters, pipes, guards, docs), not yet listening. `logger`: the process's own (main.ts flushes it when it stops); otherwise one is made from the configuration. The
 * app does not handle signals itself: the process that runs it does (main.ts).
 */
export async function createApiApp(
  options: { quiet?: boolean; logLevel?: string; overrides?: ConfigOverrides; logger?: Logger } = {},
): Promise<NestExpressApplication> {
  const overrides = { ...options.overrides, ...(options.logLevel ? { LOG_LEVEL: options.logLevel } : {}) };
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(overrides), {
    bufferLogs: true,
    bodyParser: false,
    ...(options.quiet ? { logger: false } : {}),
  });
  const config = app.get(ApiConfig);
  app.disable('x-powered-by');
  // the API's log (Nest's lines and one line per request) on stdout; a quiet app logs nothing but still answers ids
  const logger = options.quiet ? pino({ level: 'silent' }) : (options.logger ?? createLogger('api', config.LOG_LEVEL, config.LOG_FORMAT, 1));
  if (!options.quiet) app.useLogger(new PinoNestLogger(logger));
  for (const warning of config.warnings) logger.warn(warning);
  // first, so every request is logged and carries its id, the ones refused below included; its one 'close' listener
  // also ends the request's duration metric
  app.use(requestLogger(logger, requestId, app.get(ApiMetrics).requestDone));
  // the client is the socket's peer, or behind TRUSTED_PROXIES the right-most untrusted X-Forwarded-For hop (CONTRACT 14)
  const trusted = config.trustedProxies;
  app.set('trust proxy', (address: string) => trusted.contains(address));
  // strict JSON bodies of bounded size, in well-formed UTF-8; parse errors reach the filter as 422 / 413, bad bytes as
  // 400. A send or a campaign's creation may carry MEDIA_MAX_BYTES of base64 media, so its route parses first with its
  // own limit (a parsed body is skipped by the next parser). Only a request with a body enters them: a GET walked three parser layers that each
  // found no body
  behindOneLayer(app, carriesBody, () => {
    app.use(`/${API_PREFIX}/sessions/:id/messages`, json(jsonBodyOptions(config.sendBodyLimitBytes)));
    app.use(`/${API_PREFIX}/sessions/:id/messages\\:batch`, json(jsonBodyOptions(config.sendBodyLimitBytes)));
    app.use(`/${API_PREFIX}/sessions/:id/campaigns`, json(jsonBodyOptions(config.campaignBodyLimitBytes)));
    app.useBodyParser('json', jsonBodyOptions(config.BODY_LIMIT_BYTES));
  });
  // NUL bytes, prototype-named keys, deep nesting and over-long URLs are refused here, before any route or pipe; then
  // our routes are timed and rate limited
  app.use(apiPrelude(app.get(RateLimitMiddleware)));
  // what Node's HTTP parser refuses (bad bytes, huge headers) is answered in the envelope too
  app.getHttpServer().on('clientError', answerClientError);
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [
      { path: 'healthz', method: RequestMethod.GET },
      { path: 'readyz', method: RequestMethod.GET },
    ],
  });
  // after the global AuthGuard (registered while the app was created): a body is judged once the caller is known
  app.useGlobalGuards(new RequestBodyGuard());
  app.useGlobalPipes(new ApiValidationPipe());
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  // persistAuthorization: a reload of the docs page keeps the pasted key, as a user trying calls one by one expects
  // the served document names the origin it was fetched from, so Swagger UI's "Try it out" calls this very server
  behindOneLayer(app, (req) => DOCS_PATH.test(req.url ?? ''), () => {
    // Swagger UI's page and assets (2.8 MB, mostly swagger-ui-bundle.js) and the document, compressed for a client that
    // takes it (gzip, deflate or br): ~0.8 MB on the wire (docs/api.md). The API's own answers stay as they are.
    app.use(compression());
    SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app), {
      jsonDocumentUrl: 'api/docs-json',
      swaggerOptions: { persistAuthorization: true },
      patchDocumentOnRequest: (req, _res, document) => ({ ...document, servers: [{ url: requestOrigin(req as IncomingMessage), description: 'this server' }] }),
    });
  });
  return app;
}

/** Every path the docs serve (the page, its assets, the JSON and YAML documents), in any case, as the router matches. */
const DOCS_PATH = /^\/api\/docs/i;

/**
 * Whether a request may have a body, as the body parsers decide it (type-is' `hasBody`: a Transfer-Encoding or a
 * Content-Length header); one without either passes every parser untouched.
 */
const carriesBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;

/**
 * The Express layers `mount` adds (Swagger's are ten, before every route of ours) moved into one router behind one
 * layer that only the requests `enters` picks go into: the others no longer try each layer on their way to the routes.
 */
function behindOneLayer(app: NestExpressApplication, enters: (req: IncomingMessage) => boolean, mount: () => void): void {
  const stack = (app.getHttpAdapter().getInstance() as { router: ReturnType<typeof Router> }).router.stack;
  const from = stack.length;
  mount();
  const router = Router();
  router.stack.push(...stack.splice(from));
  app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => (enters(req) ? router(req as never, res as never, next) : next()));
}

/** What the operations alone cannot say: credentials, errors, and the two event channels (webhooks, WebSocket). */
const API_DESCRIPTION = [
  'Sessions, groups, messages and signed webhooks for WhatsApp accounts, per organization.',
  '',
  '**Credentials**: `Authorization: Bearer <login JWT or API key>` or `X-Api-Key: gwk_…`. Authorize once above; the page keeps it across reloads.',
  '',
  '**Errors**: always `{"error":{"code","message","details"}}`; each operation lists the statuses it can answer. A 429 carries `Retry-After`.',
  '',
  '**Events** reach you two ways, in one envelope `{id, event, organizationId, sessionId, timestamp, payload}`:',
  '- **Webhooks** (`POST /api/v1/webhooks`): signed POSTs, retried, with a delivery log and replay.',
  '- **WebSocket** `GET /api/v1/ws`: authenticate with either header above or `?token=` (browsers cannot set headers on a WebSocket); ' +
    'needs `sessions:read`; filters `?sessionId=ses_…` and `?events=a,b`; the first frame is `{"type":"ready","organizationId":…}`, ' +
    'then one envelope per frame. A refused upgrade is an HTTP status with the error envelope. Details: docs/realtime.md in the repository.',
  '',
  `**Event catalog** (payloads in docs/events.md): ${EVENT_TYPES.map((e) => `\`${e}\``).join(', ')}.`,
].join('\n');

/** Every tag an operation uses, each with what it groups. */
const TAGS: Array<[string, string]> = [
  ['auth', 'Log in and find out who the caller is.'],
  ['sessions', 'WhatsApp accounts linked to the organization: create, pair (QR or code), start, stop, groups.'],
  ['messages', 'Send messages through a session and read its message log and media.'],
  ['webhooks', 'Signed event deliveries to your URLs, their delivery log, replay and test.'],
  ['gateways', 'The gateway nodes that hold the sessions.'],
  ['health', 'Liveness and readiness probes (no credentials).'],
  ['contacts', 'Contacts of a session (number checks, lookups, blocks), presence, and the account’s own profile.'],
  ['chats', 'A session’s chats: unread counts, read marks, archive, pin, mute, and each chat’s messages.'],
  ['groups', 'Administer a group the session is in: members and admins, subject and settings, invites, picture.'],
  ['labels, status and channels', 'WhatsApp Business labels on chats, status posts (stories), and the channels the account follows.'],
  ['calls', 'Calls ringing the session’s number.'],
  ['event-sinks', 'Events published to your RabbitMQ exchange or NATS JetStream subject, with the same delivery log, replay and test as webhooks.'],
  ['campaigns', 'Paced bulk sends of a session in a send window, with caps, warm-up and opt-outs; pause, resume, cancel.'],
  ['organization', 'The organization itself: its members and invitations, its API keys (scoped to sessions and addresses).'],
  ['audit-log', 'Who did what in the organization, refusals included.'],
  ['stats', 'The organization at a glance: sessions by status, messages and deliveries per hour, failing webhooks.'],
  ['integrations', 'A session connected to the apps support teams already run: its Chatwoot inbox, and Chatwoot\'s webhook for agents\' replies.'],
];

/** Where the server was reached, as the client addressed it (Host header; plain http unless a proxy says https). */
function requestOrigin(req: IncomingMessage): string {
  const host = typeof req.headers.host === 'string' && /^[A-Za-z0-9.:[\]-]{1,300}$/.test(req.headers.host) ? req.headers.host : 'localhost';
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  return `${encrypted ? 'https' : 'http'}://${host}`;
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Messaging Gateway API')
    .setDescription(API_DESCRIPTION)
    .setVersion('1')
    .addServer('{scheme}://{host}', 'where the API listens (Swagger UI at /api/docs calls the server it is served from)', {
      scheme: { enum: ['http', 'https'], default: 'http' },
      host: { default: 'localhost:3000', description: 'host and port; `npm start` and `npm run demo` listen on localhost:3000' },
    })
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'login JWT or API key (gwk_…)' })
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'API key (gwk_…), the header WAHA users send' }, 'api-key')
    .addSecurityRequirements('bearer')
    .addSecurityRequirements('api-key');
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const doc = SwaggerModule.createDocument(app, builder.build(), { operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}` });
  // the package is UNLICENSED (proprietary): SPDX has no id for that, so a LicenseRef (a valid SPDX expression)
  doc.info.license = { name: 'Proprietary (package.json: UNLICENSED)', identifier: 'LicenseRef-Proprietary' } as OpenAPIObject['info']['license'];
  return completeOpenApiDocument(doc);
}
