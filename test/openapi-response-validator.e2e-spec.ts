import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenApiResponseValidator } from './support/openapi-response-validator';

const committed = () => JSON.parse(readFileSync(join(__dirname, '..', 'docs', 'openapi.json'), 'utf8'));
const MESSAGE = {
  id: 'msg_01', sessionId: 'ses_01', organizationId: 'org_01', waMessageId: '3EB0A1B2C3D4E5F6A7B8C9', direction: 'out', chatJid: '15550001111@s.whatsapp.net',
  from: null, type: 'text', text: 'hi', media: null, location: null, contact: null, poll: null, quotedMessageId: null, status: 'queued', error: null,
  createdAt: 1, updatedAt: 1, sentAt: null, editedAt: null, revokedAt: null, reactions: [], pollVotes: [], fromHistory: false,
};
const GET_MESSAGE = ['GET', '/api/v1/sessions/ses_01/messages/msg_01'] as const;

/** The check every e2e answer goes through (test/support/api-app.ts) finds what it must, and only that. */
describe('the response validator over docs/openapi.json', () => {
  const validator = new OpenApiResponseValidator(committed());

  it('accepts a Message with its nullable parts null, as the server sends it', () => {
    expect(validator.check(...GET_MESSAGE, 200, 'application/json; charset=utf-8', MESSAGE, 100)).toEqual([]);
  });

  it('refuses that Message under the document as generated before issue 22 (nullable beside allOf)', () => {
    const before = committed();
    const props = before.components.schemas.MessageResponse.properties;
    props.media = { nullable: true, type: 'object', allOf: [{ $ref: '#/components/schemas/MediaResponse' }] };
    expect(new OpenApiResponseValidator(before).check(...GET_MESSAGE, 200, 'application/json', MESSAGE, 100)).toEqual([
      expect.stringContaining('body/media must be object'),
    ]);
  });

  it('refuses a wrong body, an undocumented status, a wrong content type, a missing body and a 2xx off the document', () => {
    expect(validator.check(...GET_MESSAGE, 200, 'application/json', { ...MESSAGE, createdAt: 1.5 }, 100)).toEqual([expect.stringContaining('body/createdAt must be integer')]);
    expect(validator.check(...GET_MESSAGE, 200, 'application/json', { ...MESSAGE, status: 'lost' }, 100)).toEqual([expect.stringContaining('body/status must be equal to one of the allowed values')]);
    expect(validator.check(...GET_MESSAGE, 409, 'application/json', {}, 2)).toEqual([expect.stringContaining('does not document status 409')]);
    expect(validator.check(...GET_MESSAGE, 200, 'text/html', '<p>', 3)).toEqual([expect.stringContaining('got text/html')]);
    expect(validator.check(...GET_MESSAGE, 200, undefined, undefined, 0)).toEqual([expect.stringContaining('got none')]);
    expect(validator.check('GET', '/api/v1/nowhere', 200, 'application/json', {}, 2)).toEqual([expect.stringContaining('does not have')]);
    expect(validator.check('GET', '/api/v1/nowhere', 404, 'application/json', { error: { code: 'not_found', message: 'x', details: {} } }, 60)).toEqual([]);
    expect(validator.check('GET', '/api/v1/nowhere', 404, 'text/plain', 'Not Found', 9)).toEqual([expect.stringContaining('expected a JSON body')]);
  });

  it('follows shared responses and picks the most literal template (`{id}:start` before `{id}`)', () => {
    const tooLarge = { error: { code: 'payload_too_large', message: 'request body is too large', details: {} } };
    expect(validator.check('POST', '/api/v1/sessions/ses_01:start', 413, 'application/json', tooLarge, 80)).toEqual([]);
    expect(validator.check('POST', '/api/v1/sessions/ses_01:start', 413, 'application/json', { error: 'x' }, 10)).toEqual([expect.stringContaining('body/error must be object')]);
    expect(validator.operationOf('POST', '/api/v1/sessions/ses_01:start')).toBe('Sessions_start');
    expect(validator.operationOf('GET', '/api/v1/sessions/ses_01?x=1')).toBe('Sessions_get');
  });
});
