import { EventEmitter } from 'node:events';
import type { BinaryNode, WASocket } from '@whiskeysockets/baileys';
import pino from 'pino';
import { type ChannelView, DomainError, type OutboundMessage } from '@app/contracts';
import type { EngineEvent, FollowedChannelBook } from '../../engine.interface';
import { channelMessagesFrom, labelBookOf, watchAccountExtras } from '../account-extras-watch';
import { sendOptionsFor } from '../baileys-outbound';
import type { BaileysRuntime } from '../baileys-runtime';
import { ACCOUNT_EXTRAS_BAILEYS_ACTIONS as ACTIONS, CHANNELS_NAMED_PER_LIST } from './account-extras';
import type { BaileysActionContext } from './context';

/** The parts of Baileys' socket these handlers call, recording what they were asked. */
function fakeSocket(platform: string | undefined) {
  const ev = new EventEmitter();
  return {
    ev: { on: (name: string, fn: (arg: unknown) => void) => ev.on(name, fn), emit: (name: string, arg: unknown) => ev.emit(name, arg) },
    authState: { creds: { platform } },
    addChatLabel: jest.fn(async () => undefined),
    removeChatLabel: jest.fn(async () => undefined),
    newsletterMetadata: jest.fn(async (_type: string, key: string): Promise<object | null> => {
      if (key === 'KnownInvite0000000001') return { id: '120363000000000009@newsletter', name: 'News', description: 'notes', subscribers: 12 };
      // WhatsApp's own shape, as Baileys passes it on for a lookup by jid
      if (key === '120363000000000010@newsletter') {
        return { id: key, thread_metadata: { name: { text: 'Weather' }, description: { text: 'daily' }, invite: 'WeatherInvite00000001', subscribers_count: '40' } };
      }
      if (key === '120363000000000011@newsletter') throw new Error('mex query timed out');
      return null;
    }),
    newsletterFollow: jest.fn(async () => undefined),
    newsletterUnfollow: jest.fn(async () => undefined),
    newsletterFetchMessages: jest.fn(async (): Promise<BinaryNode> => ({
      tag: 'iq',
      attrs: {},
      content: [
        {
          tag: 'message_updates',
          attrs: {},
          content: [
            {
              tag: 'messages',
              attrs: {},
              content: [
                { tag: 'message', attrs: { server_id: '101', t: '1700000000' }, content: [{ tag: 'plaintext', attrs: {}, content: Buffer.from('first') }] },
                { tag: 'message', attrs: { server_id: '102', t: '1700000100' }, content: [{ tag: 'plaintext', attrs: {}, content: Buffer.from('second') }] },
              ],
            },
          ],
        },
      ],
    })),
  };
}
type FakeSocket = ReturnType<typeof fakeSocket>;

/** The test codec: a post's bytes are its text. */
const decode = (bytes: Uint8Array) => ({ conversation: Buffer.from(bytes).toString('utf8') });

function context(sock: FakeSocket): BaileysActionContext {
  return {
    sessionId: 'ses_test',
    sock: sock as unknown as WASocket,
    ownJid: () => '15550001111@s.whatsapp.net',
    runtime: { decodeMessage: decode } as unknown as BaileysRuntime,
    lookups: null,
    emit: () => undefined,
    logger: pino({ level: 'silent' }),
  };
}

/** Wires the watcher to a socket and collects what it emits. */
function watched(sock: FakeSocket): EngineEvent[] {
  const events: EngineEvent[] = [];
  watchAccountExtras(sock as unknown as WASocket, { emit: (e) => events.push(e), guard: (_what, run) => run() });
  return events;
}

async function refusal(run: () => unknown): Promise<DomainError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('Baileys labels, statuses and channels (fake socket)', () => {
  it('labels come from app-state sync: listed, assigned with addChatLabel / removeChatLabel, each change a label event', async () => {
    const sock = fakeSocket('smba');
    const events = watched(sock);
    sock.ev.emit('labels.edit', { id: '1', name: 'New customer', color: 0, deleted: false, predefinedId: '1' });
    sock.ev.emit('labels.edit', { id: '6', name: 'VIP', color: 7, deleted: false });
    const ctx = context(sock);

    expect(await ACTIONS['labels.list'](ctx, {})).toEqual({ data: [{ id: '1', name: 'New customer', color: 0 }, { id: '6', name: 'VIP', color: 7 }] });
    expect(await ACTIONS['labels.addToChat'](ctx, { chatJid: '15550002222@s.whatsapp.net', labelId: '6' })).toEqual({
      chatJid: '15550002222@s.whatsapp.net',
      labels: [{ id: '6', name: 'VIP', color: 7 }],
    });
    expect(sock.addChatLabel).toHaveBeenCalledWith('15550002222@s.whatsapp.net', '6');
    // Baileys emits our own app-state patch back as labels.association
    sock.ev.emit('labels.association', { type: 'add', association: { type: 'label_jid', chatId: '15550002222@s.whatsapp.net', labelId: '6' } });
    expect(await ACTIONS['labels.removeFromChat'](ctx, { chatJid: '15550002222@s.whatsapp.net', labelId: '6' })).toEqual({ chatJid: '15550002222@s.whatsapp.net', labels: [] });
    expect(sock.removeChatLabel).toHaveBeenCalledWith('15550002222@s.whatsapp.net', '6');
    sock.ev.emit('labels.edit', { id: '6', name: 'VIP', color: 7, deleted: true });

    expect(events).toEqual([
      { type: 'label', change: { action: 'edited', labelId: '1', label: { id: '1', name: 'New customer', color: 0 }, chatJid: null } },
      { type: 'label', change: { action: 'edited', labelId: '6', label: { id: '6', name: 'VIP', color: 7 }, chatJid: null } },
      { type: 'label', change: { action: 'assigned', labelId: '6', label: { id: '6', name: 'VIP', color: 7 }, chatJid: '15550002222@s.whatsapp.net' } },
      { type: 'label', change: { action: 'deleted', labelId: '6', label: null, chatJid: null } },
    ]);
    expect(labelBookOf(sock as unknown as WASocket).list()).toEqual([{ id: '1', name: 'New customer', color: 0 }]);
  });

  it('an unknown label is not_found once labels are synced, and nothing is sent', async () => {
    const sock = fakeSocket('smbi');
    watched(sock);
    sock.ev.emit('labels.edit', { id: '1', name: 'New customer', color: 0, deleted: false });
    const err = await refusal(() => ACTIONS['labels.addToChat'](context(sock), { chatJid: '15550002222@s.whatsapp.net', labelId: '9' }));
    expect(err.code).toBe('not_found');
    expect(sock.addChatLabel).not.toHaveBeenCalled();
  });

  it('a personal account (no business platform) is refused with conflict before anything reaches WhatsApp', async () => {
    for (const platform of ['android', undefined]) {
      const sock = fakeSocket(platform);
      const ctx = context(sock);
      expect((await refusal(() => ACTIONS['labels.list'](ctx, {}))).code).toBe('conflict');
      expect((await refusal(() => ACTIONS['labels.addToChat'](ctx, { chatJid: '15550002222@s.whatsapp.net', labelId: '1' }))).code).toBe('conflict');
      expect((await refusal(() => ACTIONS['labels.removeFromChat'](ctx, { chatJid: '15550002222@s.whatsapp.net', labelId: '1' }))).code).toBe('conflict');
      expect(sock.addChatLabel).not.toHaveBeenCalled();
      expect(sock.removeChatLabel).not.toHaveBeenCalled();
    }
  });

  it('follows a channel by invite (newsletterMetadata, then newsletterFollow), unfollows, reads posts newest first', async () => {
    const sock = fakeSocket(undefined);
    const ctx = context(sock);
    expect(await ACTIONS['channels.follow'](ctx, { invite: 'https://whatsapp.com/channel/KnownInvite0000000001' })).toEqual({
      jid: '120363000000000009@newsletter', name: 'News', description: 'notes', invite: 'KnownInvite0000000001', subscribers: 12,
    });
    expect(sock.newsletterMetadata).toHaveBeenCalledWith('invite', 'KnownInvite0000000001');
    expect(sock.newsletterFollow).toHaveBeenCalledWith('120363000000000009@newsletter');

    expect((await refusal(() => ACTIONS['channels.follow'](ctx, { invite: 'UnknownInvite000000001' }))).code).toBe('not_found');
    expect(sock.newsletterFollow).toHaveBeenCalledTimes(1);

    expect(await ACTIONS['channels.unfollow'](ctx, { jid: '120363000000000009@newsletter' })).toEqual({});
    expect(sock.newsletterUnfollow).toHaveBeenCalledWith('120363000000000009@newsletter');

    const posts = await ACTIONS['channels.messages'](ctx, { jid: '120363000000000009@newsletter', count: 1 });
    expect(sock.newsletterFetchMessages).toHaveBeenCalledWith('120363000000000009@newsletter', 1, undefined, undefined);
    expect(posts).toEqual({ data: [{ channelJid: '120363000000000009@newsletter', serverId: '102', text: 'second', type: 'text', timestamp: 1_700_000_100_000 }] });
  });

  it('lists the followed channels the gateway keeps (Baileys rc14 has no query): followed ones, ones seen posting named by the network, unfollowed ones gone', async () => {
    const kept = new Map<string, ChannelView & { named: boolean }>();
    const book: FollowedChannelBook = {
      list: async () => [...kept.values()].map((c) => ({ ...c })),
      remember: async ({ jid, ...facts }) => {
        const before = kept.get(jid) ?? { jid, name: '', description: null, invite: null, subscribers: null, named: false };
        const given = Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined && v !== null));
        kept.set(jid, { ...before, ...given, named: before.named || typeof facts.name === 'string' });
      },
      forget: async (jid) => void kept.delete(jid),
    };
    const sock = fakeSocket(undefined);
    const ctx = { ...context(sock), channels: book };
    await ACTIONS['channels.follow'](ctx, { invite: 'KnownInvite0000000001' });
    // channels seen only by their posts (the gateway remembers a post's channel): one the network names, one it does not answer for
    await book.remember({ jid: '120363000000000010@newsletter' });
    await book.remember({ jid: '120363000000000011@newsletter' });
    const listed = await ACTIONS['channels.list'](ctx, {});
    expect(listed.data).toEqual([
      { jid: '120363000000000009@newsletter', name: 'News', description: 'notes', invite: 'KnownInvite0000000001', subscribers: 12 },
      { jid: '120363000000000010@newsletter', name: 'Weather', description: 'daily', invite: 'WeatherInvite00000001', subscribers: 40 },
      { jid: '120363000000000011@newsletter', name: '', description: null, invite: null, subscribers: null },
    ]);
    expect(sock.newsletterMetadata.mock.calls.filter(([type]) => type === 'jid').map(([, jid]) => jid)).toEqual(['120363000000000010@newsletter', '120363000000000011@newsletter']);
    // a named channel is not asked again; the unanswered one is
    await ACTIONS['channels.list'](ctx, {});
    expect(sock.newsletterMetadata.mock.calls.filter(([type]) => type === 'jid').map(([, jid]) => jid).slice(2)).toEqual(['120363000000000011@newsletter']);

    await ACTIONS['channels.unfollow'](ctx, { jid: '120363000000000009@newsletter' });
    expect((await ACTIONS['channels.list'](ctx, {})).data.map((c) => c.jid)).toEqual(['120363000000000010@newsletter', '120363000000000011@newsletter']);
  });

  it('names at most CHANNELS_NAMED_PER_LIST unnamed channels per list, so a list stays quick', async () => {
    const unnamed = Array.from({ length: CHANNELS_NAMED_PER_LIST + 3 }, (_, i) => ({ jid: `12036300000000${1000 + i}@newsletter`, name: '', description: null, invite: null, subscribers: null, named: false }));
    const sock = fakeSocket(undefined);
    const ctx = { ...context(sock), channels: { list: async () => unnamed, remember: async () => undefined, forget: async () => undefined } };
    expect((await ACTIONS['channels.list'](ctx, {})).data).toHaveLength(unnamed.length);
    expect(sock.newsletterMetadata).toHaveBeenCalledTimes(CHANNELS_NAMED_PER_LIST);
  });

  it('without the gateway’s store of followed channels, listing them is not_implemented, said plainly', async () => {
    expect((await refusal(() => ACTIONS['channels.list'](context(fakeSocket(undefined)), {}))).code).toBe('not_implemented');
  });

  it('reads newsletterFetchMessages’ node shape; an unreadable post is listed as unknown', () => {
    const node: BinaryNode = {
      tag: 'iq',
      attrs: {},
      content: [{ tag: 'message_updates', attrs: {}, content: [{ tag: 'messages', attrs: {}, content: [{ tag: 'message', attrs: { server_id: '7', t: '1' }, content: [{ tag: 'plaintext', attrs: {}, content: Buffer.from([1]) }] }] }] }],
    };
    const broken = () => {
      throw new Error('bad proto');
    };
    expect(channelMessagesFrom(node, '1@newsletter', broken)).toEqual([{ channelJid: '1@newsletter', serverId: '7', text: null, type: 'unknown', timestamp: 1000 }]);
  });

  it('a contact’s status and a channel post become their own events; our own status and protocol stanzas do not', () => {
    const sock = fakeSocket(undefined);
    const events = watched(sock);
    sock.ev.emit('messages.upsert', {
      type: 'notify',
      messages: [
        { key: { id: 'S1', remoteJid: 'status@broadcast', participant: '98765@lid', participantAlt: '15550002222@s.whatsapp.net', fromMe: false }, message: { imageMessage: { mimetype: 'image/jpeg', caption: 'sunset', directPath: '/d', mediaKey: Buffer.from([1]) } }, messageTimestamp: 1_700_000_000 },
        { key: { id: 'S2', remoteJid: 'status@broadcast', participant: '15550001111@s.whatsapp.net', fromMe: true }, message: { conversation: 'mine' } },
        { key: { id: 'S3', remoteJid: 'status@broadcast', participant: '15550002222@s.whatsapp.net', fromMe: false }, message: { protocolMessage: { type: 0 } } },
        { key: { id: 'N1', remoteJid: '120363000000000009@newsletter', fromMe: false, server_id: '55' }, message: { conversation: 'post' }, messageTimestamp: 1_700_000_001 },
        { key: { id: 'C1', remoteJid: '15550002222@s.whatsapp.net', fromMe: false }, message: { conversation: 'a chat message' } },
      ],
    });
    sock.ev.emit('messages.upsert', { type: 'history', messages: [{ key: { id: 'S9', remoteJid: 'status@broadcast', participant: '15550002222@s.whatsapp.net' }, message: { conversation: 'old' } }] });
    expect(events).toEqual([
      { type: 'status', status: { waMessageId: 'S1', from: '15550002222@s.whatsapp.net', type: 'image', text: 'sunset', media: { mimetype: 'image/jpeg', size: null, filename: null, caption: 'sunset' }, timestamp: 1_700_000_000_000 } },
      { type: 'channel-message', post: { channelJid: '120363000000000009@newsletter', serverId: '55', text: 'post', type: 'text', timestamp: 1_700_000_001_000 } },
    ]);
  });

  it('a status post goes to status@broadcast with statusJidList (its audience) and its background', () => {
    const message: OutboundMessage = {
      waMessageId: '3EB0AA',
      to: 'status@broadcast',
      content: { type: 'text', text: 'open today' },
      quoted: null,
      mentions: [],
      statusPost: { audience: ['15550002222@s.whatsapp.net'], backgroundColor: '#1f6feb' },
    };
    expect(sendOptionsFor(message, () => ({})).options).toEqual({ messageId: '3EB0AA', statusJidList: ['15550002222@s.whatsapp.net'], backgroundColor: '#1f6feb' });
    expect(sendOptionsFor({ ...message, statusPost: undefined }, () => ({})).options).toEqual({ messageId: '3EB0AA' });
  });
});
