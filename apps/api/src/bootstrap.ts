import 'reflect-metadata';
import { INestApplication, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { json } from 'express';
import { Logger } from 'nestjs-pino';
import { ApiConfig, ConfigOverrides } from '@app/config';
import { AppModule } from './app.module';
import { answerClientError } from './common/client-error';
import { ErrorEnvelopeFilter } from './common/error.filter';
import { inputHardening } from './common/input-hardening';
import { ApiValidationPipe } from './common/validation.pipe';

export const API_PREFIX = 'api/v1';

/** The configured API application (filters, pipes, guards, docs), not yet listening. */
export async function createApiApp(options: { quiet?: boolean; logLevel?: string; overrides?: ConfigOverrides } = {}): Promise<NestExpressApplication> {
  const overrides = { ...options.overrides, ...(options.logLevel ? { LOG_LEVEL: options.logLevel } : {}) };
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(overrides), {
    bufferLogs: true,
    bodyParser: false,
    ...(options.quiet ? { logger: false } : {}),
  });
  const config = app.get(ApiConfig);
  if (!options.quiet) app.useLogger(app.get(Logger));
  for (const warning of config.warnings) app.get(Logger).warn(warning);
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  // strict JSON bodies of bounded size; parse errors reach the filter as 422 / 413. A send may carry MEDIA_MAX_BYTES
  // of base64 media, so its route parses first with its own limit (a parsed body is skipped by the next parser)
  const jsonTypes = ['application/json', 'application/*+json'];
  app.use(`/${API_PREFIX}/sessions/:id/messages`, json({ limit: config.sendBodyLimitBytes, strict: false, type: jsonTypes }));
  app.useBodyParser('json', { limit: config.BODY_LIMIT_BYTES, strict: false, type: jsonTypes });
  // NUL bytes, prototype-named keys, deep nesting and over-long URLs are refused here, before any route or pipe
  app.use(inputHardening());
  // what Node's HTTP parser refuses (bad bytes, huge headers) is answered in the envelope too
  app.getHttpServer().on('clientError', answerClientError);
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [
      { path: 'healthz', method: RequestMethod.GET },
      { path: 'readyz', method: RequestMethod.GET },
      { path: 'metrics', method: RequestMethod.GET },
    ],
  });
  app.useGlobalPipes(new ApiValidationPipe());
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  app.enableShutdownHooks();
  SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'api/docs-json' });
  return app;
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const doc = new DocumentBuilder()
    .setTitle('Messaging Gateway API')
    .setDescription('Sessions, groups, messages and signed webhooks for WhatsApp accounts, per organization.')
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'login JWT or API key (gwk_…)' })
    .addSecurityRequirements('bearer')
    .build();
  return SwaggerModule.createDocument(app, doc, { operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}` });
}
