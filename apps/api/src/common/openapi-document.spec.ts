import type { OpenAPIObject } from '@nestjs/swagger';
import Ajv2020 from 'ajv/dist/2020';
import { completeOpenApiDocument } from './openapi-document';

/** What @nestjs/swagger writes for a Message with a nullable nested object (OpenAPI 3.0's dialect). */
const generated = (): OpenAPIObject =>
  ({
    openapi: '3.0.0',
    info: { title: 't', version: '1' },
    paths: {
      '/api/v1/messages/{id}': {
        get: { operationId: 'Messages_get', responses: { '200': { description: '', content: { 'application/json': { schema: { $ref: '#/components/schemas/Message' } } } } } },
      },
      '/api/v1/auth/login': { post: { operationId: 'Auth_login', security: [], responses: { '200': { description: '' }, '401': { description: 'inline' } } } },
      '/healthz': { get: { operationId: 'Health_healthz', security: [], responses: { '200': { description: '' } } } },
    },
    components: {
      schemas: {
        Media: { type: 'object', required: ['mimetype'], properties: { mimetype: { type: 'string' } } },
        Message: {
          type: 'object',
          required: ['media', 'text', 'role', 'sentAt'],
          properties: {
            media: { nullable: true, type: 'object', allOf: [{ $ref: '#/components/schemas/Media' }] },
            text: { type: 'string', nullable: true, example: 'hi' },
            role: { type: 'string', nullable: true, enum: ['owner', 'admin'] },
            sentAt: { type: 'integer', nullable: true },
          },
        },
      },
    },
  }) as unknown as OpenAPIObject;

const validatorFor = (doc: OpenAPIObject) => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema(doc as object, 'doc');
  return ajv.compile({ $ref: 'doc#/components/schemas/Message' });
};
const message = { media: null, text: null, role: null, sentAt: null };

describe('completeOpenApiDocument', () => {
  it('the generated 3.0 form refuses null for a nullable reference under a standard validator (issue 22)', () => {
    expect(validatorFor(generated())(message)).toBe(false);
  });

  it('makes every nullable field admit null, and only null beside its type', () => {
    const validate = validatorFor(completeOpenApiDocument(generated()));
    expect(validate(message)).toBe(true);
    expect(validate({ media: { mimetype: 'image/png' }, text: 'x', role: 'admin', sentAt: 1 })).toBe(true);
    expect(validate({ ...message, media: { size: 1 } })).toBe(false);
    expect(validate({ ...message, role: 'viewer' })).toBe(false);
    expect(validate({ ...message, sentAt: 1.5 })).toBe(false);
    expect(validate({ ...message, text: 3 })).toBe(false);
  });

  it('writes OpenAPI 3.1 (JSON Schema 2020-12): no `nullable`, `examples` arrays', () => {
    const doc = completeOpenApiDocument(generated());
    expect(doc.openapi).toBe('3.1.0');
    const text = JSON.stringify(doc.components);
    expect(text).not.toContain('nullable');
    expect((doc.components!.schemas!.Message as { properties: Record<string, unknown> }).properties.text).toEqual({ type: ['string', 'null'], examples: ['hi'] });
  });

  it('documents the errors any request can get, 401 and 429 only where they apply, keeping what an operation declares', () => {
    const doc = completeOpenApiDocument(generated());
    const statuses = (path: string, method: 'get' | 'post') => Object.keys(doc.paths[path][method]!.responses);
    expect(statuses('/api/v1/messages/{id}', 'get')).toEqual(['200', '400', '401', '413', '414', '415', '422', '429', '431', '500']);
    expect(statuses('/api/v1/auth/login', 'post')).toEqual(['200', '400', '401', '413', '414', '415', '422', '429', '431', '500']);
    expect(doc.paths['/api/v1/auth/login'].post!.responses['401']).toEqual({ description: 'inline' });
    expect(statuses('/healthz', 'get')).toEqual(['200', '400', '413', '414', '415', '422', '431', '500']);
    expect(doc.paths['/healthz'].get!.responses['413']).toEqual({ $ref: '#/components/responses/PayloadTooLarge' });
    expect(doc.components!.responses!.PayloadTooLarge).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' }, example: { error: { code: 'payload_too_large' } } } } });
  });
});
