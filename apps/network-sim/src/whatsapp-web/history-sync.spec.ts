import type { SimHistoryChat, SimHistoryMessage } from '@app/contracts';
import { historySyncOf } from './history-sync';
import type { Baileys } from './wa-kit';

/** The one enum historySyncOf reads (jest cannot load Baileys' ESM module). */
const baileys = { proto: { HistorySync: { HistorySyncType: { INITIAL_BOOTSTRAP: 0, RECENT: 3 } } } } as unknown as Baileys;

const ANN = '15550001001@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const ME = '15550001000@s.whatsapp.net';

function message(chatJid: string, text: string, timestamp: number, extra: Partial<SimHistoryMessage> = {}): SimHistoryMessage {
  return { id: `ID${timestamp}`, from: chatJid, chatJid, type: 'text', text, media: null, location: null, contact: null, quotedWaMessageId: null, mentions: [], timestamp, fromMe: false, ...extra };
}

describe('historySyncOf (a history batch as the HistorySync the phone sends)', () => {
  const ann: SimHistoryChat = { jid: ANN, name: 'Ann', unreadCount: 2, archived: true, pinned: true, mutedUntil: 1_900_000_000_000 };

  it('the first batch: INITIAL_BOOTSTRAP, a conversation per chat with its state, messages newest first as WebMessageInfo', () => {
    const sync = historySyncOf(
      baileys,
      {
        chats: [ann],
        messages: [
          message(ANN, 'older', 1_700_000_000_000),
          message(ANN, 'mine', 1_700_000_001_000, { fromMe: true, from: ME }),
          message(GROUP, 'in the group', 1_700_000_002_000, { from: ANN }),
        ],
      },
      new Map(),
      0,
    );
    expect(sync).toMatchObject({ syncType: 0, chunkOrder: 0 });
    const [annChat, group] = sync.conversations!;
    expect(annChat).toMatchObject({ id: ANN, name: 'Ann', unreadCount: 2, archived: true, muteEndTime: 1_900_000_000_000 });
    expect(Number(annChat.pinned)).toBeGreaterThan(0);
    expect(annChat.messages!.map((m) => [m.message!.message!.conversation, m.message!.key!.fromMe, m.message!.messageTimestamp])).toEqual([
      ['mine', true, 1_700_000_001],
      ['older', false, 1_700_000_000],
    ]);
    expect(group).toMatchObject({ id: GROUP, unreadCount: 0, archived: false, pinned: 0 });
    expect(group.messages![0].message!.key).toEqual({ remoteJid: GROUP, fromMe: false, id: 'ID1700000002000', participant: ANN });
  });

  it('a later batch is RECENT and repeats the state the first batch gave its chats (Baileys upserts the chat again)', () => {
    const sync = historySyncOf(baileys, { chats: [], messages: [message(ANN, 'later', 1_700_000_003_000)] }, new Map([[ANN, ann]]), 2);
    expect(sync).toMatchObject({ syncType: 3, chunkOrder: 2 });
    expect(sync.conversations).toEqual([expect.objectContaining({ id: ANN, name: 'Ann', archived: true, unreadCount: 2 })]);
  });
});
