import 'reflect-metadata';
import { OUTBOUND_MESSAGE_TYPES } from '@app/contracts';
import { ApiValidationPipe } from '../../common/validation.pipe';
import { SEND_EXAMPLES } from './send-examples';
import { SendMessageDto } from './send-message.dto';

describe('the OpenAPI examples of a send', () => {
  const pipe = new ApiValidationPipe();

  it.each(OUTBOUND_MESSAGE_TYPES.map((type) => [type]))('%s: an example of that type, which the body validation accepts', async (type) => {
    const { value } = SEND_EXAMPLES[type];
    expect(value.type ?? 'text').toBe(type);
    await expect(pipe.transform(structuredClone(value), { type: 'body', metatype: SendMessageDto, data: '' })).resolves.toBeInstanceOf(SendMessageDto);
  });
});
