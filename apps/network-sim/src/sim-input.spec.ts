import { DomainError } from '@app/contracts';
import { parseGroupPatch, parseInbound, parseSend } from './sim-input';

const jid = '15550001111@s.whatsapp.net';

function fieldOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError && err.code === 'validation_error') return Object.keys(err.details);
    throw err;
  }
  throw new Error('expected a validation_error');
}

describe('sim input', () => {
  it('accepts a phone number as sender and defaults to a text message in the sender’s chat', () => {
    expect(parseInbound({ from: '+1 555 000 1111', text: 'hi' })).toMatchObject({ from: jid, chatJid: jid, type: 'text', text: 'hi', media: null });
  });

  it('generates deterministic bytes of the requested size when only a mimetype is given', () => {
    const a = parseInbound({ from: jid, type: 'image', media: { mimetype: 'image/png', size: 10 } });
    const b = parseInbound({ from: jid, type: 'image', media: { mimetype: 'image/png', size: 10 } });
    expect(a.media).toMatchObject({ mimetype: 'image/png', caption: null });
    expect(a.media!.data).toHaveLength(10);
    expect(a.media!.data.equals(b.media!.data)).toBe(true);
  });

  it('names the offending field of a device send, down to the nested path', () => {
    const base = { waMessageId: 'ID1', to: jid, mentions: [] };
    expect(fieldOf(() => parseSend({ ...base, content: { type: 'poll', poll: { name: 'q', options: ['only'] } } }))).toEqual(['content.poll.options']);
    expect(fieldOf(() => parseSend({ ...base, content: { type: 'poll', poll: { name: 'q', options: ['a', 'b'], selectableCount: 3 } } }))).toEqual([
      'content.poll.selectableCount',
    ]);
    expect(fieldOf(() => parseSend({ ...base, waMessageId: 'has space', content: { type: 'text', text: 'x' } }))).toEqual(['waMessageId']);
    expect(fieldOf(() => parseSend({ ...base, content: { type: 'image', media: { data: '', mimetype: 'image/png' } } }))).toEqual(['content.media.data']);
    expect(fieldOf(() => parseSend({ ...base, mentions: ['bob'], content: { type: 'text', text: 'x' } }))).toEqual(['mentions']);
  });

  it('accepts only the group properties WhatsApp has', () => {
    expect(parseGroupPatch({ subject: 'S', isLocked: false })).toEqual({ subject: 'S', isLocked: false });
    expect(fieldOf(() => parseGroupPatch({ subject: 'S', owner: 'x' }))).toEqual(['owner']);
  });
});
