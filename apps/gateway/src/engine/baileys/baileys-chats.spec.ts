import Long from 'long';
import type { Chat, ChatUpdate, WAMessage } from '@whiskeysockets/baileys';
import { chatUpdateFrom, chatUpdatesFrom, historyBatchesFrom, toEpochMs } from './baileys-chats';
import { CHAT_ACTIONS, lastMessagesOf } from './actions/chats';
import type { BaileysActionContext } from './actions/context';

const OWN = '491701234567@s.whatsapp.net';
const ALICE = '15550001111@s.whatsapp.net';
const ALICE_LID = '123456789012345@lid';
const GROUP = '120363000000000001@g.us';
const encode = (content: object) => Buffer.from(JSON.stringify(content));

const text = (id: string, remoteJid: string, body: string, fromMe = false, seconds = 1_700_000_000): WAMessage =>
  ({ key: { id, remoteJid, fromMe }, message: { conversation: body }, messageTimestamp: seconds }) as WAMessage;

describe('chat updates from Baileys (chats.update, chats.upsert)', () => {
  it('maps archive, pin, mute and read, keeping only what Baileys set', () => {
    expect(chatUpdateFrom({ id: ALICE, archived: true } as ChatUpdate)).toEqual({ jid: ALICE, archived: true });
    // a pin is its time; an unpin null
    expect(chatUpdateFrom({ id: ALICE, pinned: 1_700_000_000 } as ChatUpdate)).toEqual({ jid: ALICE, pinned: true });
    expect(chatUpdateFrom({ id: ALICE, pinned: null } as ChatUpdate)).toEqual({ jid: ALICE, pinned: false });
    expect(chatUpdateFrom({ id: ALICE, muteEndTime: Long.fromNumber(1_800_000_000_000) } as unknown as ChatUpdate)).toEqual({ jid: ALICE, mutedUntil: 1_800_000_000_000 });
    expect(chatUpdateFrom({ id: ALICE, muteEndTime: null } as ChatUpdate)).toEqual({ jid: ALICE, mutedUntil: null });
    expect(chatUpdateFrom({ id: ALICE, unreadCount: 0 } as ChatUpdate)).toEqual({ jid: ALICE, unreadCount: 0 });
    // WhatsApp's "mark as unread"
    expect(chatUpdateFrom({ id: ALICE, unreadCount: -1 } as ChatUpdate)).toEqual({ jid: ALICE, unreadCount: 1 });
  });

  it('keeps a chat by its phone-number JID when the network tells it, and drops updates that say nothing', () => {
    expect(chatUpdateFrom({ id: ALICE_LID, pnJid: ALICE, archived: false } as Chat)).toEqual({ jid: ALICE, archived: false });
    expect(chatUpdateFrom({ id: ALICE_LID, archived: false } as Chat)).toEqual({ jid: ALICE_LID, archived: false });
    expect(chatUpdatesFrom([{ id: ALICE, unreadCount: null } as ChatUpdate, { id: GROUP, name: 'Team' } as ChatUpdate, {} as ChatUpdate])).toEqual([
      { jid: GROUP, name: 'Team' },
    ]);
  });

  it('reads WhatsApp times in seconds or ms', () => {
    expect(toEpochMs(1_700_000_000)).toBe(1_700_000_000_000);
    expect(toEpochMs(1_700_000_000_123)).toBe(1_700_000_000_123);
    expect(toEpochMs(0)).toBeNull();
    expect(toEpochMs(null)).toBeNull();
  });
});

describe('history batches from messaging-history.set', () => {
  it('splits the messages into bounded batches, the chats with the first, and keeps sent ones as fromMe', () => {
    const messages = Array.from({ length: 5 }, (_, i) => text(`ID${i}`, ALICE, `m${i}`, i === 4, 1_700_000_000 + i));
    const chats = [{ id: ALICE, name: 'Alice', unreadCount: 2, archived: true, pinned: 1_700_000_000, muteEndTime: 1_800_000_000 } as unknown as Chat];
    const batches = historyBatchesFrom({ chats, messages }, OWN, encode, 2);
    expect(batches.map((b) => b.messages.map((m) => m.id))).toEqual([['ID0', 'ID1'], ['ID2', 'ID3'], ['ID4']]);
    expect(batches[0].chats).toEqual([{ jid: ALICE, name: 'Alice', unreadCount: 2, archived: true, pinned: true, mutedUntil: 1_800_000_000_000 }]);
    expect(batches[1].chats).toEqual([]);
    expect(batches[2].messages[0]).toMatchObject({ fromMe: true, from: OWN, chatJid: ALICE, text: 'm4', timestamp: 1_700_000_004_000 });
    expect(batches[0].messages[0]).toMatchObject({ fromMe: false, from: ALICE, text: 'm0' });
  });

  it('leaves out what is not a user-visible message, and still passes chats without messages', () => {
    const stub = { key: { id: 'STUB', remoteJid: ALICE, fromMe: false }, messageStubType: 1 } as WAMessage;
    const batches = historyBatchesFrom({ chats: [{ id: GROUP, name: 'Team' } as Chat], messages: [stub] }, OWN, encode);
    expect(batches).toEqual([{ type: 'history', chats: [{ jid: GROUP, name: 'Team', unreadCount: 0, archived: false, pinned: false, mutedUntil: null }], messages: [] }]);
    expect(historyBatchesFrom({ chats: [], messages: [] }, OWN, encode)).toEqual([]);
  });
});

describe('chat actions through Baileys', () => {
  const calls: Array<[string, unknown[]]> = [];
  const sock = {
    readMessages: async (...args: unknown[]) => void calls.push(['readMessages', args]),
    chatModify: async (...args: unknown[]) => void calls.push(['chatModify', args]),
  };
  const ctx = { sock } as unknown as BaileysActionContext;
  const last = { waMessageId: 'LAST', chatJid: ALICE, fromMe: false, participant: null, timestamp: 1_700_000_000_500 };
  beforeEach(() => (calls.length = 0));

  it('read: read receipts for the keys, then the read mark naming the last message', async () => {
    const keys = [{ waMessageId: 'A1', chatJid: ALICE, fromMe: false, participant: null }];
    await CHAT_ACTIONS['chat.read'](ctx, { chatJid: ALICE, keys, last });
    expect(calls).toEqual([
      ['readMessages', [[{ remoteJid: ALICE, id: 'A1', fromMe: false }]]],
      ['chatModify', [{ markRead: true, lastMessages: [{ key: { remoteJid: ALICE, id: 'LAST', fromMe: false }, messageTimestamp: 1_700_000_000 }] }, ALICE]],
    ]);
  });

  it('read of a chat without messages sends nothing', async () => {
    await CHAT_ACTIONS['chat.read'](ctx, { chatJid: ALICE, keys: [], last: null });
    expect(calls).toEqual([]);
  });

  it('archive, pin and mute are app-state patches', async () => {
    await CHAT_ACTIONS['chat.archive'](ctx, { chatJid: ALICE, archived: true, last });
    await CHAT_ACTIONS['chat.pin'](ctx, { chatJid: ALICE, pinned: false });
    await CHAT_ACTIONS['chat.mute'](ctx, { chatJid: ALICE, until: 1_800_000_000_000 });
    await CHAT_ACTIONS['chat.mute'](ctx, { chatJid: ALICE, until: null });
    expect(calls).toEqual([
      ['chatModify', [{ archive: true, lastMessages: lastMessagesOf(last) }, ALICE]],
      ['chatModify', [{ pin: false }, ALICE]],
      ['chatModify', [{ mute: 1_800_000_000_000 }, ALICE]],
      ['chatModify', [{ mute: null }, ALICE]],
    ]);
  });
});
