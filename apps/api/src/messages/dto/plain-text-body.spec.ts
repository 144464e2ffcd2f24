import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import { ApiValidationPipe } from '../../common/validation.pipe';
import { plainTextBody, plainTextItem } from './plain-text-body';
import { SendBatchItemDto } from './send-batch.dto';
import { SendMessageDto, TEXT_MAX } from './send-message.dto';

/** The fast path of a text body answers what the global pipe answers, or leaves the body to it. */
describe('plainTextBody / plainTextItem', () => {
  const pipe = new ApiValidationPipe();
  const viaPipe = (raw: unknown, metatype: typeof SendMessageDto) =>
    pipe.transform(structuredClone(raw), { type: 'body', metatype, data: '' }).then(
      (dto) => ({ dto: dto as SendMessageDto }),
      (err: unknown) => ({ err }),
    );

  const texts = [
    { to: '15551234567', text: 'hi' },
    { text: 'hi', to: '15551234567@s.whatsapp.net' },
    { to: ' +1 555-123 4567 ', text: 'hi' },
    { to: '15551234567@lid', text: 'x'.repeat(TEXT_MAX) },
    { to: '120363000000000001@g.us', text: 'hi', type: 'text' },
    { to: '15551234567', text: 'see https://example.com', linkPreview: false },
    { to: '15551234567', text: 'hi', linkPreview: true, type: 'text' },
  ];
  const keyed = texts.map((t, i) => ({ ...t, idempotencyKey: `order 7-${i} ~` }));
  const others: unknown[] = [
    null,
    [],
    'text',
    {},
    { to: '15551234567' },
    { text: 'hi' },
    { to: '15551234567', text: '' },
    { to: '15551234567', text: 'x'.repeat(TEXT_MAX + 1) },
    { to: '1234', text: 'hi' },
    { to: 'someone', text: 'hi' },
    { to: 15551234567, text: 'hi' },
    { to: '15551234567', text: 7 },
    { to: '15551234567', text: 'hi', type: 'image' },
    { to: '15551234567', text: 'hi', type: 'nope' },
    { to: '15551234567', text: 'hi', type: null },
    { to: '15551234567', text: 'hi', linkPreview: 'no' },
    { to: '15551234567', text: 'hi', linkPreview: null },
    { to: '15551234567', text: 'hi', mentions: ['15550001111'] },
    { to: '15551234567', text: 'hi', quotedMessageId: 'msg_1' },
    { to: '15551234567', text: 'hi', extra: 1 },
    { to: '15551234567', text: 'hi', idempotencyKey: '' },
    { to: '15551234567', text: 'hi', idempotencyKey: 'é' },
    { to: '15551234567', text: 'hi', idempotencyKey: 'k'.repeat(256) },
    { to: '15551234567', text: 'hi', idempotencyKey: 7 },
    JSON.parse('{"to":"15551234567","text":"hi","__proto__":{"x":1}}'),
    { to: '15551234567', media: { url: 'https://example.com/a.jpg', mimetype: 'image/jpeg' }, type: 'image' },
  ];

  it.each([
    ['a send', plainTextBody, SendMessageDto],
    ['a bulk item', plainTextItem, SendBatchItemDto],
  ] as const)('%s: the pipe\'s instance for every body it takes, and only for bodies the pipe accepts', async (_, fast, metatype) => {
    for (const raw of [...texts, ...keyed, ...others]) {
      const got = fast(structuredClone(raw));
      const expected = await viaPipe(raw, metatype);
      if (got === null) continue;
      expect([raw, expected]).toStrictEqual([raw, { dto: got }]);
      expect(Object.getPrototypeOf(got)).toBe(metatype.prototype);
      expect(Object.keys(got)).toEqual(Object.keys((expected as { dto: SendMessageDto }).dto));
    }
  });

  it('takes the texts (and a bulk item\'s idempotency key), leaves the rest to the pipe', () => {
    for (const raw of texts) {
      expect(plainTextBody(raw)).not.toBeNull();
      expect(plainTextItem(raw)).not.toBeNull();
    }
    for (const raw of keyed) {
      expect(plainTextBody(raw)).toBeNull();
      expect(plainTextItem(raw)).toMatchObject({ idempotencyKey: raw.idempotencyKey });
    }
    for (const raw of others) {
      expect(plainTextBody(raw)).toBeNull();
      expect(plainTextItem(raw)).toBeNull();
    }
  });

  /**
   * The rules the fast path was written against, the class's whole list (a rule on another field may read `type`): a
   * rule added, removed or renamed fails this until plainTextBody is checked against it (and this list updated).
   */
  it('was written against the DTOs\' rules as they are', () => {
    const rulesOf = (metatype: typeof SendMessageDto) => {
      const by: Record<string, string[]> = {};
      for (const m of getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false)) (by[m.propertyName] ??= []).push(m.name ?? m.type);
      return Object.fromEntries(Object.entries(by).map(([field, rules]) => [field, rules.sort().join(' ')]));
    };
    const send = {
      to: 'isString matches',
      type: 'conditionalValidation messageType',
      text: 'conditionalValidation contentOf isString textLength',
      media: 'conditionalValidation contentOf isObject nestedValidation stickerWebp',
      location: 'conditionalValidation contentOf isObject nestedValidation',
      contact: 'conditionalValidation contentOf isObject nestedValidation',
      reaction: 'conditionalValidation contentOf isObject nestedValidation',
      poll: 'conditionalValidation contentOf isObject nestedValidation',
      pollVote: 'conditionalValidation contentOf isObject nestedValidation',
      linkPreview: 'conditionalValidation contentOf isBoolean',
      quotedMessageId: 'conditionalValidation contentOf isString matches',
      mentions: 'arrayMaxSize conditionalValidation contentOf isArray matches',
      // a scheduled send (CONTRACT 17) always takes the full validation: the fast path refuses any other key
      sendAt: 'conditionalValidation isInt sendAtAhead',
    };
    expect(rulesOf(SendMessageDto)).toEqual(send);
    expect(rulesOf(SendBatchItemDto)).toEqual({ ...send, idempotencyKey: 'conditionalValidation isString matches' });
  });
});
