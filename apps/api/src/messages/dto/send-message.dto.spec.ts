import { ApiValidationPipe } from '../../common/validation.pipe';
import { plainTextSend, SendMessageDto, TEXT_MAX } from './send-message.dto';

/** What the full validation makes of a body: the DTO, or the refusal. */
async function validated(raw: unknown): Promise<SendMessageDto | Error> {
  try {
    return (await new ApiValidationPipe().transform(raw, { type: 'body', metatype: SendMessageDto, data: '' })) as SendMessageDto;
  } catch (err) {
    return err as Error;
  }
}

describe('plainTextSend (the plain text send without class-validator)', () => {
  const accepted: unknown[] = [
    { to: '15551234567@s.whatsapp.net', text: 'hello' },
    { to: '15551234567', text: 'hello' },
    { to: ' +1 555-123 4567 ', text: 'x' },
    { to: '123456789012345@lid', text: 'x'.repeat(TEXT_MAX) },
    { to: '120363040000000000@g.us', text: '😀'.repeat(TEXT_MAX / 2) },
    { to: '12345-67890@g.us', text: ' leading and trailing spaces ', type: 'text' },
    { type: 'text', text: 'line\nbreak', to: '15551234567' },
  ];
  const declined: unknown[] = [
    { to: '15551234567', text: '' },
    { to: '15551234567', text: 'x'.repeat(TEXT_MAX + 1) },
    { to: '15551234567', text: '😀'.repeat(TEXT_MAX / 2) + 'x' },
    { to: '1234', text: 'too short a number' },
    { to: 'someone@example.com', text: 'x' },
    { to: 15551234567, text: 'x' },
    { to: '15551234567', text: 42 },
    { to: '15551234567' },
    { text: 'x' },
    { to: '15551234567', text: 'x', type: 'image' },
    { to: '15551234567', text: 'x', type: 'TEXT' },
    { to: '15551234567', text: 'x', type: null },
    { to: '15551234567', text: 'x', mentions: ['15550001111'] },
    { to: '15551234567', text: 'x', quotedMessageId: 'msg_1' },
    { to: '15551234567', text: 'x', extra: 1 },
    JSON.parse('{"to":"15551234567","text":"x","__proto__":{"media":{}}}'),
    [{ to: '15551234567', text: 'x' }],
    null,
    'text',
    Object.assign(Object.create({ inherited: true }), { to: '15551234567', text: 'x' }),
  ];

  it.each(accepted.map((b) => [JSON.stringify(b).slice(0, 80), b]))('accepts %s exactly as the full validation does', async (_, body) => {
    const fast = plainTextSend(body);
    expect(fast).toBeInstanceOf(SendMessageDto);
    const full = await validated(body);
    expect(full).toBeInstanceOf(SendMessageDto);
    expect(fast).toEqual(full);
    expect(Object.keys(fast!).filter((k) => (fast as any)[k] !== undefined).sort()).toEqual(Object.keys(full).filter((k) => (full as any)[k] !== undefined).sort());
  });

  it.each(declined.map((b) => [JSON.stringify(b)?.slice(0, 80) ?? String(b), b]))('leaves %s to the full validation', async (_, body) => {
    expect(plainTextSend(body)).toBeNull();
  });

  it('declines only bodies the full validation refuses or that are not plain texts', async () => {
    for (const body of declined) {
      // looked at before the pipe, which strips __proto__ keys in place
      const plainShape = Array.isArray(body) || body === null || typeof body !== 'object'
        ? false
        : Object.getPrototypeOf(body) === Object.prototype && Object.keys(body).every((k) => ['to', 'text', 'type'].includes(k));
      const full = await validated(body);
      if (full instanceof SendMessageDto) expect({ body, plainShape, type: full.type }).toEqual({ body, plainShape: false, type: full.type });
    }
  });
});
