import { DomainError, type SimNetworkEvent, type SimSentMessage } from '@app/contracts';
import { parseStatusPost } from '../sim-input';
import { type AccountExtrasNetwork, SimAccountExtras } from './account-extras';

/** Two paired devices of two accounts, and what the network delivered to each. */
function network(): AccountExtrasNetwork & { delivered: Array<[string, SimNetworkEvent]> } {
  const accounts: Record<string, string> = { ses_a: '15550000001@s.whatsapp.net', ses_b: '15550000002@s.whatsapp.net' };
  const delivered: Array<[string, SimNetworkEvent]> = [];
  return {
    delivered,
    sessionsOfAccount: (jid) => Object.keys(accounts).filter((s) => accounts[s] === jid),
    deliverTo: (sessionId, event) => {
      delivered.push([sessionId, event]);
      return { queued: false };
    },
    accountOf: (sessionId) => ({ jid: accounts[sessionId] }),
    keepMediaBytes: (input) => ({ mediaId: 'm1', mimetype: input.mimetype, size: input.data.length, filename: null, caption: input.caption, sha256: 'x' }),
  };
}

const code = (run: () => unknown): string => {
  try {
    run();
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  return 'none';
};

describe('SimAccountExtras (the simulated network’s labels, statuses and channels)', () => {
  it('a business account starts with WhatsApp’s five labels; assigning tells every device of the account once; others are refused', () => {
    const extras = new SimAccountExtras();
    const net = network();
    const a = '15550000001@s.whatsapp.net';
    expect(code(() => extras.assign(net, a, { chatJid: '15550000009@s.whatsapp.net', labelId: '1' }, true))).toBe('conflict');
    extras.setBusiness(a, true);
    expect(extras.labelList(a).map((l) => l.id)).toEqual(['1', '2', '3', '4', '5']);
    const chat = '15550000009@s.whatsapp.net';
    expect(extras.assign(net, a, { chatJid: chat, labelId: '3' }, true).labels.map((l) => l.id)).toEqual(['3']);
    extras.assign(net, a, { chatJid: chat, labelId: '3' }, true);
    expect(net.delivered).toEqual([['ses_a', { type: 'label', change: { action: 'assigned', labelId: '3', label: extras.labelList(a)[2], chatJid: chat } }]]);
    expect(extras.labelsOfChat(a, chat)).toEqual(['3']);
    expect(code(() => extras.assign(net, a, { chatJid: chat, labelId: '42' }, true))).toBe('not_found');
    expect(code(() => extras.assign(net, a, { chatJid: 'nope', labelId: '1' }, true))).toBe('validation_error');

    const made = extras.editLabel(net, 'ses_a', { name: 'VIP', color: 7 });
    expect(made).toMatchObject({ id: '6', name: 'VIP', color: 7, deleted: false, delivered: ['ses_a'] });
    extras.assign(net, a, { chatJid: chat, labelId: '6' }, true);
    extras.editLabel(net, 'ses_a', { id: '6', deleted: true });
    expect(extras.labelsOfChat(a, chat)).toEqual(['3']);
    expect(extras.view(a).labels.map((l) => l.id)).toEqual(['1', '2', '3', '4', '5']);
  });

  it('a device’s status reaches the paired devices of its audience, not itself; a contact’s reaches the session it was posted to', () => {
    const extras = new SimAccountExtras();
    const net = network();
    const sent = {
      id: '3EB0S1', sessionId: 'ses_a', from: '15550000001@s.whatsapp.net', to: 'status@broadcast', type: 'text', text: 'hi', media: null,
      timestamp: 1, status: { audience: ['15550000002@s.whatsapp.net', '15550000003@s.whatsapp.net', '15550000001@s.whatsapp.net'], backgroundColor: '#000000' },
    } as unknown as SimSentMessage;
    expect(extras.statusPosted(net, sent).deliveredTo).toEqual(['ses_b']);
    expect(net.delivered.map(([s, e]) => [s, e.type])).toEqual([['ses_b', 'status']]);
    const contact = extras.contactStatus(net, 'ses_a', { from: '15550000007@s.whatsapp.net', text: 'mine' });
    expect(contact).toMatchObject({ sessionId: null, audience: ['15550000001@s.whatsapp.net'], deliveredTo: ['ses_a'] });
    expect(extras.listStatuses('ses_a').map((s) => s.id)).toEqual(['3EB0S1']);
    expect(code(() => extras.contactStatus(net, 'ses_a', { from: 'x', text: 'y' }))).toBe('validation_error');
  });

  it('reads a device’s statusPost strictly', () => {
    expect(parseStatusPost({ audience: ['15550000002@s.whatsapp.net', '15550000002@s.whatsapp.net'] })).toEqual({ audience: ['15550000002@s.whatsapp.net'], backgroundColor: null });
    expect(code(() => parseStatusPost({ audience: [] }))).toBe('validation_error');
    expect(code(() => parseStatusPost({ audience: ['15550000002@s.whatsapp.net'], backgroundColor: 'red' }))).toBe('validation_error');
    expect(code(() => parseStatusPost(undefined))).toBe('validation_error');
  });

  it('channels: follow by invite (code or link), posts to followers only, newest first, unfollow', () => {
    const extras = new SimAccountExtras();
    const net = network();
    const a = '15550000001@s.whatsapp.net';
    const channel = extras.createChannel({ name: 'News' });
    expect(extras.follow(a, { invite: `https://whatsapp.com/channel/${channel.invite}` })).toMatchObject({ jid: channel.jid, subscribers: 1 });
    expect(code(() => extras.follow(a, { invite: 'ZZZZZZZZZZZZZZZZZZZZZZ' }))).toBe('not_found');
    expect(extras.post(net, channel.jid, { text: 'one' }).delivered).toEqual(['ses_a']);
    extras.post(net, channel.jid, { text: 'two' });
    expect(extras.messages({ jid: channel.jid, count: 5 }).data.map((p) => p.text)).toEqual(['two', 'one']);
    expect(extras.followed(a).map((c) => c.jid)).toEqual([channel.jid]);
    expect(extras.unfollow(a, { jid: channel.jid })).toEqual({});
    expect(code(() => extras.unfollow(a, { jid: channel.jid }))).toBe('not_found');
    expect(extras.post(net, channel.jid, { text: 'three' }).delivered).toEqual([]);
  });
});
