import pino from 'pino';
import { MemoryMessageStore } from '../../../../test/fakes/memory-message-store';
import { recordingEventSink } from '../../../../test/fakes/recording-event-sink';
import type { SessionRecords } from '../store-ports';
import type { GroupInfo } from '../engine/engine.interface';
import { InboundEvents } from './inbound-events';
import { OutboundSender } from './outbound-sender';

const ALICE = '15550001111@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const OWN = '491701234567@s.whatsapp.net';
const BOB = '15550002222@s.whatsapp.net';
const CAROL = '15550003333@s.whatsapp.net';

function setup(group: GroupInfo | null = null) {
  const store = new MemoryMessageStore();
  const stored: string[] = [];
  const { sink, events } = recordingEventSink();
  const logger = pino({ level: 'silent' });
  const sender = new OutboundSender({
    sessionId: 'ses_1',
    organizationId: 'org_1',
    store,
    events: sink,
    settings: { ttlMs: 60_000, typingMsPerChar: 0, typingMinMs: 0, typingMaxMs: 0 },
    live: () => null,
    logger,
    sleep: async () => undefined,
  });
  const records = {
    find: async () => ({ id: 'ses_1', phoneNumber: OWN.split('@')[0], autoRead: false }),
    findGroup: async (_s: string, jid: string) => (group && group.groupJid === jid ? group : null),
  } as unknown as SessionRecords;
  const inbound = new InboundEvents({
    sessionId: 'ses_1',
    organizationId: 'org_1',
    store,
    records,
    events: sink,
    sender,
    logger: pino({ level: 'silent' }),
    clock: () => 1_000,
    inboundStored: (row) => stored.push(row.waMessageId),
  });
  const receive = (id: string, waMessageId: string, m: { text?: string | null; caption?: string; chatJid?: string } = {}) =>
    inbound.handle(
      {
        type: 'message',
        message: {
          id: waMessageId,
          from: ALICE,
          chatJid: m.chatJid ?? ALICE,
          text: m.text ?? null,
          timestamp: 900,
          fromMe: false,
          type: m.caption !== undefined ? 'image' : 'text',
          media: m.caption !== undefined
            ? { mimetype: 'image/jpeg', size: 10, filename: null, caption: m.caption, ref: { engine: 'baileys', mediaType: 'image', directPath: '/v', mediaKey: 'a2V5', url: null } }
            : null,
        },
      },
      null,
    );
  return { store, events, inbound, receive, stored };
}

describe('InboundEvents: eager media hook', () => {
  it('tells of each inbound message once it is stored, and not of a re-delivery', async () => {
    const { receive, stored, events } = setup();
    await receive('m1', 'I1', { caption: 'a photo' });
    expect(events.map((e) => e.event)).toEqual(['message.received']);
    expect(stored).toEqual(['I1']);
    await receive('m1', 'I1', { caption: 'a photo' });
    expect(stored).toEqual(['I1']);
  });
});

describe('InboundEvents: edits and deletes for everyone', () => {
  it('an edit updates the stored text and publishes message.edited with the previous text, not a new message', async () => {
    const { store, events, inbound, receive } = setup();
    await receive('m1', 'T1', { text: 'helo' });
    events.length = 0;
    await inbound.handle({ type: 'edit', waMessageId: 'T1', chatJid: ALICE, from: ALICE, text: 'hello' }, null);
    expect(store.rows).toHaveLength(1);
    expect(store.rows[0]).toMatchObject({ waMessageId: 'T1', text: 'hello' });
    expect(events).toEqual([{ event: 'message.edited', payload: { message: expect.objectContaining({ id: store.rows[0].id, waMessageId: 'T1', text: 'hello' }), previousText: 'helo' } }]);
  });

  it('an edit of a media message changes its caption', async () => {
    const { store, events, inbound, receive } = setup();
    await receive('m1', 'I1', { caption: 'old' });
    events.length = 0;
    await inbound.handle({ type: 'edit', waMessageId: 'I1', chatJid: ALICE, from: ALICE, text: 'new' }, null);
    expect(store.rows[0]).toMatchObject({ text: null, media: { caption: 'new' } });
    expect(events).toEqual([{ event: 'message.edited', payload: { message: expect.objectContaining({ media: expect.objectContaining({ caption: 'new' }) }), previousText: 'old' } }]);
  });

  it('an edit of a message never stored, or the same edit re-delivered, stores and publishes nothing', async () => {
    const { store, events, inbound, receive } = setup();
    await inbound.handle({ type: 'edit', waMessageId: 'NOPE', chatJid: ALICE, from: ALICE, text: 'x' }, null);
    expect(store.rows).toHaveLength(0);
    expect(events).toEqual([]);
    await receive('m1', 'T1', { text: 'a' });
    events.length = 0;
    await inbound.handle({ type: 'edit', waMessageId: 'T1', chatJid: ALICE, from: ALICE, text: 'b' }, null);
    await inbound.handle({ type: 'edit', waMessageId: 'T1', chatJid: ALICE, from: ALICE, text: 'b' }, null);
    expect(events.map((e) => e.event)).toEqual(['message.edited']);
  });

  it('a delete for everyone marks the row and publishes message.revoked once; an unknown message is ignored', async () => {
    const { store, events, inbound, receive } = setup();
    await receive('m1', 'G1', { text: 'oops', chatJid: GROUP });
    events.length = 0;
    const revoke = { type: 'revoke' as const, waMessageId: 'G1', chatJid: GROUP, by: ALICE };
    await inbound.handle(revoke, null);
    await inbound.handle(revoke, null);
    await inbound.handle({ ...revoke, waMessageId: 'NOPE' }, null);
    expect(store.rows[0].revokedAt).toBe(1_000);
    expect(events).toEqual([{ event: 'message.revoked', payload: { messageId: store.rows[0].id, waMessageId: 'G1', chatJid: GROUP, by: ALICE } }]);
    // a revoked message is not edited any more
    await inbound.handle({ type: 'edit', waMessageId: 'G1', chatJid: GROUP, from: ALICE, text: 'x' }, null);
    expect(events).toHaveLength(1);
  });
});

describe('InboundEvents: group receipts per member', () => {
  const group: GroupInfo = {
    groupJid: GROUP,
    subject: 'Team',
    description: '',
    ownerJid: OWN,
    participants: [OWN, BOB, CAROL],
    isAnnounce: false,
    isLocked: false,
    network: { addressingMode: 'lid', participants: [{ id: '111@lid', phoneNumber: OWN }, { id: '222@lid', phoneNumber: BOB }, { id: '333@lid', phoneNumber: CAROL }] },
  };

  function sentToGroup(store: MemoryMessageStore) {
    return store.queue({ id: 'msg_g', waMessageId: 'G1', chatJid: GROUP, status: 'sent' });
  }

  const receipt = (participant: string, status: 'delivered' | 'read' | 'played') => ({ type: 'receipt' as const, waMessageId: 'G1', chatJid: GROUP, status, participant });

  it("each member's receipt is message.ack with the participant; the message is read only when every member (not us) read it", async () => {
    const { store, events, inbound } = setup(group);
    sentToGroup(store);
    await inbound.handle(receipt(BOB, 'read'), null);
    expect(store.byId('msg_g')).toMatchObject({ status: 'sent', memberAcks: { [BOB]: 'read' } });
    expect(events).toEqual([{ event: 'message.ack', payload: { messageId: 'msg_g', waMessageId: 'G1', chatJid: GROUP, status: 'read', participant: BOB } }]);
    events.length = 0;
    // Carol named by her LID: matched to the number the group keeps for her
    await inbound.handle(receipt('333@lid', 'read'), null);
    expect(store.byId('msg_g')).toMatchObject({ status: 'read', memberAcks: { [BOB]: 'read', [CAROL]: 'read' } });
    expect(events).toEqual([
      { event: 'message.ack', payload: { messageId: 'msg_g', waMessageId: 'G1', chatJid: GROUP, status: 'read', participant: CAROL } },
      { event: 'message.ack', payload: { messageId: 'msg_g', waMessageId: 'G1', chatJid: GROUP, status: 'read' } },
    ]);
  });

  it("a member's receipt moves forward only; the message takes the step every member reached (delivered)", async () => {
    const { store, events, inbound } = setup(group);
    sentToGroup(store);
    await inbound.handle(receipt(BOB, 'read'), null);
    await inbound.handle(receipt(BOB, 'delivered'), null);
    await inbound.handle(receipt(CAROL, 'delivered'), null);
    expect(store.byId('msg_g')).toMatchObject({ status: 'delivered', memberAcks: { [BOB]: 'read', [CAROL]: 'delivered' } });
    expect(events.map((e) => `${e.payload.status} ${e.payload.participant ?? 'all'}`)).toEqual([`read ${BOB}`, `delivered ${CAROL}`, 'delivered all']);
  });

  it('a group not stored here: the member receipt is kept and announced, the message status waits; 1:1 receipts unchanged', async () => {
    const { store, events, inbound } = setup(null);
    sentToGroup(store);
    await inbound.handle(receipt(BOB, 'read'), null);
    expect(store.byId('msg_g')?.status).toBe('sent');
    expect(events).toHaveLength(1);
    store.queue({ id: 'msg_d', waMessageId: 'D1', chatJid: ALICE, status: 'sent' });
    events.length = 0;
    await inbound.handle({ type: 'receipt', waMessageId: 'D1', chatJid: ALICE, status: 'read' }, null);
    expect(store.byId('msg_d')?.status).toBe('read');
    expect(events).toEqual([{ event: 'message.ack', payload: { messageId: 'msg_d', waMessageId: 'D1', chatJid: ALICE, status: 'read' } }]);
  });
});
