import { createHash } from 'node:crypto';
import Long from 'long';
import type {
  BaileysEventMap,
  GroupMetadata,
  GroupParticipant,
  MessageUserReceiptUpdate,
  proto,
  WACallEvent,
  WAMessage,
  WAMessageUpdate,
} from '@whiskeysockets/baileys';
import { contactFromVcard } from '@app/contracts';
import type { InboundMessage } from '../engine.interface';
import {
  callFrom,
  groupInfoFrom,
  groupMetadataFrom,
  groupParticipantsFrom,
  groupUpdateFrom,
  inboundMessageFrom,
  isWholeGroup,
  pollVoteFrom,
  presencesFrom,
  PROTOCOL_TYPE,
  protocolEventFrom,
  reactionFrom,
  receiptFromUpdate,
  receiptsFoldedInto,
  receiptsFromUserReceipt,
  WA_STATUS,
} from './baileys-mapping';
import { FakeMessageCodec } from '../../../../../test/fakes/baileys-codec';
import type { PollOptionVotes } from './baileys-runtime';

const OWN = '491701234567@s.whatsapp.net';
const ALICE = '15550001111@s.whatsapp.net';
const BOB = '15550002222@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const MEDIA_KEY = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);

function direct(id: string, message: proto.IMessage): WAMessage {
  return { key: { id, remoteJid: ALICE, fromMe: false }, message, messageTimestamp: 1_700_000_000 };
}

function inGroup(id: string, message: proto.IMessage): WAMessage {
  return { key: { id, remoteJid: GROUP, participant: '98765432109876@lid', participantAlt: BOB, fromMe: false }, message, messageTimestamp: 1_700_000_000 };
}

function map(msg: WAMessage): { message: InboundMessage | null; codec: FakeMessageCodec } {
  const codec = new FakeMessageCodec();
  return { message: inboundMessageFrom(msg, OWN, codec.encodeMessage), codec };
}

const base = { text: null, media: null, location: null, contact: null, poll: null, quotedWaMessageId: null, mentions: [] };

describe('inboundMessageFrom: every kind of message of messages.upsert', () => {
  it('conversation: a plain text in a direct chat, raw = the encoded content', () => {
    const { message, codec } = map(direct('T1', { conversation: 'hello' }));
    expect(message).toEqual({ ...base, id: 'T1', from: ALICE, chatJid: ALICE, type: 'text', text: 'hello', timestamp: 1_700_000_000_000, fromMe: false, raw: expect.any(Uint8Array) });
    expect(codec.decodeMessage(message!.raw!)).toEqual({ conversation: 'hello' });
  });

  it('extended text in a group: the sender by its number, a reply with quotedWaMessageId, mentions', () => {
    const { message } = map(
      inGroup('T2', { extendedTextMessage: { text: '@15550001111 see above', contextInfo: { stanzaId: 'Q1', participant: ALICE, mentionedJid: [ALICE, '98765432109876@lid'] } } }),
    );
    expect(message).toMatchObject({ id: 'T2', from: BOB, chatJid: GROUP, type: 'text', text: '@15550001111 see above', quotedWaMessageId: 'Q1', mentions: [ALICE, '98765432109876@lid'] });
  });

  it('image with caption: media metadata and the MediaRef to download it later', () => {
    const { message } = map(
      direct('I1', {
        imageMessage: { url: 'https://mmg.whatsapp.net/o1/v/t62/abc', directPath: '/o1/v/t62/abc?ccb=11', mediaKey: MEDIA_KEY, mimetype: 'image/jpeg', fileLength: 2048, caption: 'look' },
      }),
    );
    expect(message).toMatchObject({
      type: 'image',
      text: null,
      media: {
        mimetype: 'image/jpeg',
        size: 2048,
        filename: null,
        caption: 'look',
        ref: { engine: 'baileys', mediaType: 'image', directPath: '/o1/v/t62/abc?ccb=11', mediaKey: Buffer.from(MEDIA_KEY).toString('base64'), url: 'https://mmg.whatsapp.net/o1/v/t62/abc' },
      },
    });
  });

  it("a media reference the sender aimed elsewhere: a url off WhatsApp's CDN is not kept, a direct path that is not a path is not offered (issue 37)", () => {
    const image = (url: string, directPath = '/o1/v/t62/abc?ccb=11') => map(direct('I9', { imageMessage: { url, directPath, mediaKey: MEDIA_KEY, mimetype: 'image/jpeg' } })).message;
    for (const url of ['https://127.0.0.1:6379/o1/v/t62/abc', 'https://mmg.whatsapp.net:6379/x', 'http://mmg.whatsapp.net/x', 'https://mmg.whatsapp.net.evil.example/x', 'https://u@mmg.whatsapp.net/x']) {
      expect({ url, ref: image(url)?.media?.ref }).toEqual({ url, ref: expect.objectContaining({ directPath: '/o1/v/t62/abc?ccb=11', url: null }) });
    }
    expect(image('https://media-fra3-1.cdn.whatsapp.net/o1/v/t62/abc')?.media?.ref).toMatchObject({ url: 'https://media-fra3-1.cdn.whatsapp.net/o1/v/t62/abc' });
    const crafted = image('https://mmg.whatsapp.net/x', '@127.0.0.1:6379/x');
    expect(crafted).toMatchObject({ type: 'image', media: null });
  });

  it('video, and a size given as a protobuf Long', () => {
    const { message } = map(direct('V1', { videoMessage: { directPath: '/v', mediaKey: MEDIA_KEY, mimetype: 'video/mp4', fileLength: Long.fromNumber(5_000_000), caption: null } }));
    expect(message).toMatchObject({ type: 'video', media: { mimetype: 'video/mp4', size: 5_000_000, caption: null, ref: { mediaType: 'video', url: null } } });
  });

  it('audio and voice notes (ptt) are both audio', () => {
    const voice = map(direct('A1', { audioMessage: { directPath: '/a', mediaKey: MEDIA_KEY, mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3 } })).message;
    const file = map(direct('A2', { audioMessage: { directPath: '/b', mediaKey: MEDIA_KEY, mimetype: 'audio/mpeg' } })).message;
    expect(voice).toMatchObject({ type: 'audio', media: { mimetype: 'audio/ogg; codecs=opus', ref: { mediaType: 'audio' } } });
    expect(file).toMatchObject({ type: 'audio', media: { mimetype: 'audio/mpeg', ref: { mediaType: 'audio', directPath: '/b' } } });
  });

  it('document, also inside documentWithCaptionMessage, with file name and caption', () => {
    const doc: proto.Message.IDocumentMessage = { directPath: '/d', mediaKey: MEDIA_KEY, mimetype: 'application/pdf', fileName: 'invoice.pdf', fileLength: 10, caption: 'the invoice' };
    const plain = map(direct('D1', { documentMessage: doc })).message;
    const wrapped = map(direct('D2', { documentWithCaptionMessage: { message: { documentMessage: doc } } })).message;
    const expected = { type: 'document', media: { mimetype: 'application/pdf', size: 10, filename: 'invoice.pdf', caption: 'the invoice', ref: { mediaType: 'document' } } };
    expect(plain).toMatchObject(expected);
    expect(wrapped).toMatchObject(expected);
  });

  it('sticker', () => {
    const { message } = map(direct('S1', { stickerMessage: { directPath: '/s', mediaKey: MEDIA_KEY, mimetype: 'image/webp', isAnimated: false } }));
    expect(message).toMatchObject({ type: 'sticker', media: { mimetype: 'image/webp', ref: { mediaType: 'sticker' } } });
  });

  it('media without a mediaKey is kept as a message of its type with no downloadable media', () => {
    const { message } = map(direct('I2', { imageMessage: { mimetype: 'image/jpeg' } }));
    expect(message).toMatchObject({ type: 'image', media: null });
  });

  it('location and live location', () => {
    const pin = map(direct('L1', { locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Brandenburger Tor', address: 'Pariser Platz' } })).message;
    const live = map(direct('L2', { liveLocationMessage: { degreesLatitude: 48.1, degreesLongitude: 11.6, caption: 'on my way' } })).message;
    expect(pin).toMatchObject({ type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Brandenburger Tor', address: 'Pariser Platz' } });
    expect(live).toMatchObject({ type: 'location', location: { latitude: 48.1, longitude: 11.6, name: null, address: null } });
  });

  it('contact (vCard → name and number) and a contacts array (the first)', () => {
    const vcard = 'BEGIN:VCARD\nVERSION:3.0\nN:;Jane;;;\nFN:Jane Doe\nitem1.TEL;waid=15550003333:+1 555-000-3333\nitem1.X-ABLabel:Mobile\nEND:VCARD';
    const one = map(direct('C1', { contactMessage: { displayName: 'Jane', vcard } })).message;
    const many = map(direct('C2', { contactsArrayMessage: { displayName: '2 contacts', contacts: [{ vcard }, { displayName: 'Other', vcard: 'BEGIN:VCARD\nFN:Other\nEND:VCARD' }] } })).message;
    expect(one).toMatchObject({ type: 'contact', contact: { fullName: 'Jane', phoneNumber: '15550003333' } });
    expect(many).toMatchObject({ type: 'contact', contact: { fullName: 'Jane Doe', phoneNumber: '15550003333' } });
  });

  it('reads a vCard without waid from its TEL value, unfolding continued lines', () => {
    expect(contactFromVcard('BEGIN:VCARD\r\nFN:Max\r\n  Mustermann\r\nTEL;TYPE=CELL:+49 (170) 123-4567\r\nEND:VCARD', null)).toEqual({ fullName: 'Max Mustermann', phoneNumber: '491701234567' });
  });

  it.each([
    ['pollCreationMessage', { pollCreationMessage: { name: 'Lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }], selectableOptionsCount: 0 } }, 2],
    ['pollCreationMessageV2', { pollCreationMessageV2: { name: 'Lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }], selectableOptionsCount: 2 } }, 2],
    ['pollCreationMessageV3', { pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }], selectableOptionsCount: 1 } }, 1],
  ] as [string, proto.IMessage, number][])('%s is a poll (selectable 0 = any number)', (_kind, content, selectableCount) => {
    const { message } = map(inGroup('P1', { ...content, messageContextInfo: { messageSecret: new Uint8Array(32) } }));
    expect(message).toMatchObject({ type: 'poll', poll: { name: 'Lunch?', options: ['Pizza', 'Sushi'], selectableCount } });
  });

  it('keeps the poll secret with the content when a disappearing wrapper holds the poll', () => {
    const secret = new Uint8Array(32).fill(7);
    const { message, codec } = map(direct('P2', { messageContextInfo: { messageSecret: secret }, ephemeralMessage: { message: { pollCreationMessageV3: { name: 'x', options: [{ optionName: 'a' }] } } } }));
    expect(codec.decodeMessage(message!.raw!)).toEqual({ pollCreationMessageV3: { name: 'x', options: [{ optionName: 'a' }] }, messageContextInfo: { messageSecret: secret } });
  });

  it('anything we do not model is an unknown message, not dropped', () => {
    const { message } = map(direct('U1', { eventMessage: { name: 'Party' } }));
    expect(message).toMatchObject({ id: 'U1', type: 'unknown', text: null });
  });

  it('a message from our own phone is fromMe, from our JID', () => {
    const { message } = map({ key: { id: 'M1', remoteJid: ALICE, fromMe: true }, message: { conversation: 'from the phone' }, messageTimestamp: 1 });
    expect(message).toMatchObject({ from: OWN, chatJid: ALICE, fromMe: true });
  });

  it('a broadcast-list message is in the 1:1 chat with its sender (Baileys names the list as remoteJid)', () => {
    // as Baileys' decodeMessageNode builds it: the list as remoteJid, the sender as participant, its other form as remoteJidAlt
    const fromList = map({
      key: { id: 'B1', remoteJid: '1700000000@broadcast', participant: '22222@lid', remoteJidAlt: ALICE, fromMe: false },
      message: { conversation: 'to my list' },
      messageTimestamp: 1,
    }).message;
    expect(fromList).toMatchObject({ id: 'B1', chatJid: ALICE, from: ALICE, fromMe: false, text: 'to my list' });
    // one we sent to a list from the phone stays in the list's own chat
    const ours = map({ key: { id: 'B2', remoteJid: '1700000000@broadcast', participant: OWN, fromMe: true }, message: { conversation: 'mine' }, messageTimestamp: 1 }).message;
    expect(ours).toMatchObject({ chatJid: '1700000000@broadcast', from: OWN, fromMe: true });
  });

  it('leaves out status broadcasts, newsletter posts, protocol stanzas, reactions and poll votes (other events)', () => {
    const left = [
      { key: { id: 'S', remoteJid: 'status@broadcast', participant: ALICE, fromMe: false }, message: { conversation: 'status' } },
      { key: { id: 'NL', remoteJid: '120363000000000009@newsletter', fromMe: false }, message: { conversation: 'channel post' } },
      direct('P', { protocolMessage: { type: 0 } }),
      direct('R', { reactionMessage: { text: '👍', key: { id: 'X', remoteJid: ALICE } } }),
      direct('V', { pollUpdateMessage: { pollCreationMessageKey: { id: 'X' }, vote: { encPayload: new Uint8Array(1), encIv: new Uint8Array(1) } } }),
      { key: { id: 'N', remoteJid: ALICE, fromMe: false } },
    ] as WAMessage[];
    expect(left.map((m) => map(m).message)).toEqual([null, null, null, null, null, null]);
  });
});

describe('edits, deletes for everyone and wrapped content', () => {
  const edit = (id: string, target: string, edited: proto.IMessage): proto.IMessage => ({
    protocolMessage: { type: PROTOCOL_TYPE.MESSAGE_EDIT, key: { id: target, remoteJid: ALICE, fromMe: false }, editedMessage: edited },
  });

  it('a protocolMessage MESSAGE_EDIT is an edit of the original (not a new message), with the new text', () => {
    const msg = direct('E1', edit('E1', 'T1', { conversation: 'hello, corrected' }));
    expect(protocolEventFrom(msg, OWN)).toEqual({ type: 'edit', waMessageId: 'T1', chatJid: ALICE, from: ALICE, text: 'hello, corrected' });
    expect(map(msg).message).toBeNull();
  });

  it('an edit inside editedMessage (how WhatsApp sends it), of a caption, in a group: the member by number', () => {
    const msg = inGroup('E2', { editedMessage: { message: edit('E2', 'I1', { imageMessage: { caption: 'new caption' } }) } });
    expect(protocolEventFrom(msg, OWN)).toEqual({ type: 'edit', waMessageId: 'I1', chatJid: GROUP, from: BOB, text: 'new caption' });
    expect(map(msg).message).toBeNull();
  });

  it('an edit whose new content is an extended text, and one with nothing we can show (ignored)', () => {
    expect(protocolEventFrom(direct('E3', edit('E3', 'T2', { extendedTextMessage: { text: 'see https://x.y' } })), OWN)).toMatchObject({ type: 'edit', text: 'see https://x.y' });
    expect(protocolEventFrom(direct('E4', edit('E4', 'T3', { stickerMessage: {} })), OWN)).toBeNull();
  });

  it('a REVOKE is a delete for everyone of the original, by whoever sent it (us from the phone: our JID)', () => {
    const revoke = { protocolMessage: { type: PROTOCOL_TYPE.REVOKE, key: { id: 'T1', remoteJid: GROUP, fromMe: false } } };
    expect(protocolEventFrom(inGroup('R1', revoke), OWN)).toEqual({ type: 'revoke', waMessageId: 'T1', chatJid: GROUP, by: BOB });
    const mine: WAMessage = { key: { id: 'R2', remoteJid: ALICE, fromMe: true }, message: revoke, messageTimestamp: 1_700_000_000 };
    expect(protocolEventFrom(mine, OWN)).toEqual({ type: 'revoke', waMessageId: 'T1', chatJid: ALICE, by: OWN });
    expect(map(inGroup('R1', revoke)).message).toBeNull();
  });

  it('other protocol stanzas and ordinary messages are neither edits nor deletes', () => {
    expect(protocolEventFrom(direct('P1', { protocolMessage: { type: 3, ephemeralExpiration: 86400 } }), OWN)).toBeNull();
    expect(protocolEventFrom(direct('T1', { conversation: 'hi' }), OWN)).toBeNull();
    expect(protocolEventFrom({ ...direct('S1', edit('S1', 'T1', { conversation: 'x' })), key: { id: 'S1', remoteJid: 'status@broadcast', participant: ALICE } }, OWN)).toBeNull();
  });

  it('view-once, disappearing, associatedChildMessage and group status wrappers are unwrapped to their content', () => {
    const image = { imageMessage: { caption: 'once', mimetype: 'image/jpeg', directPath: '/v/x', mediaKey: MEDIA_KEY } };
    expect(map(direct('V1', { viewOnceMessageV2: { message: image } })).message).toMatchObject({ type: 'image', media: { caption: 'once' } });
    expect(map(direct('V2', { ephemeralMessage: { message: { viewOnceMessage: { message: image } } } })).message).toMatchObject({ type: 'image', media: { caption: 'once' } });
    expect(map(direct('V3', { associatedChildMessage: { message: { conversation: 'child' } } })).message).toMatchObject({ type: 'text', text: 'child' });
    expect(map(inGroup('V4', { groupStatusMessageV2: { message: { conversation: 'status' } } })).message).toMatchObject({ type: 'text', text: 'status' });
  });
});

describe('receipts', () => {
  it.each([
    [WA_STATUS.DELIVERY_ACK, 'delivered'],
    [WA_STATUS.READ, 'read'],
    [WA_STATUS.PLAYED, 'played'],
  ])('messages.update status %i of a message we sent → %s', (status, ack) => {
    const update: WAMessageUpdate = { key: { id: '3EB0AA', remoteJid: '98765@lid', remoteJidAlt: ALICE, fromMe: true }, update: { status } };
    expect(receiptFromUpdate(update)).toEqual({ type: 'receipt', waMessageId: '3EB0AA', chatJid: ALICE, status: ack });
  });

  it('ignores server acks, errors and updates of messages we did not send', () => {
    const ours = { id: '3EB0AA', remoteJid: ALICE, fromMe: true };
    expect(receiptFromUpdate({ key: ours, update: { status: WA_STATUS.SERVER_ACK } })).toBeNull();
    expect(receiptFromUpdate({ key: ours, update: { status: WA_STATUS.ERROR } })).toBeNull();
    expect(receiptFromUpdate({ key: { ...ours, fromMe: false }, update: { status: WA_STATUS.READ } })).toBeNull();
  });

  it("message-receipt.update (a group member's receipts) → one event per step it reports, in order, with the member", () => {
    const key = { id: '3EB0BB', remoteJid: GROUP, fromMe: true };
    const delivered: MessageUserReceiptUpdate = { key, receipt: { userJid: BOB, receiptTimestamp: 1_700_000_001 } };
    const played: MessageUserReceiptUpdate = { key, receipt: { userJid: BOB, playedTimestamp: 1_700_000_003 } };
    // a delivery and a read that Baileys' event buffer folded into one entry: both steps, the delivery first
    const folded: MessageUserReceiptUpdate = { key, receipt: { userJid: BOB, receiptTimestamp: 1_700_000_001, readTimestamp: 1_700_000_002 } };
    // a member named by LID, or by a device JID: the member's own JID
    expect(receiptsFromUserReceipt({ key, receipt: { userJid: '98765:12@lid', readTimestamp: 1 } })).toMatchObject([{ participant: '98765@lid' }]);
    expect(receiptsFromUserReceipt({ key, receipt: { userJid: '15550002222:3@s.whatsapp.net', readTimestamp: 1 } })).toMatchObject([{ participant: BOB }]);
    const event = (status: string) => ({ type: 'receipt', waMessageId: '3EB0BB', chatJid: GROUP, status, participant: BOB });
    expect(receiptsFromUserReceipt(delivered)).toEqual([event('delivered')]);
    expect(receiptsFromUserReceipt(folded)).toEqual([event('delivered'), event('read')]);
    expect(receiptsFromUserReceipt(played)).toEqual([event('played')]);
    expect(receiptsFromUserReceipt({ key: { ...key, fromMe: false }, receipt: { userJid: BOB, readTimestamp: 1 } })).toEqual([]);
  });

  it('receipts folded into the buffered echo of our own message (userReceipt in a group, status 1:1) are receipts too', () => {
    const key = { id: '3EB0CC', remoteJid: GROUP, fromMe: true };
    const echo = { key, status: WA_STATUS.SERVER_ACK, userReceipt: [{ userJid: BOB, receiptTimestamp: 1_700_000_001 }, { userJid: ALICE, receiptTimestamp: 1, readTimestamp: 2 }] };
    expect(receiptsFoldedInto(echo).map((e) => [e.status, e.participant])).toEqual([
      ['delivered', BOB],
      ['delivered', ALICE],
      ['read', ALICE],
    ]);
    const direct = { key: { id: '3EB0DD', remoteJid: ALICE, fromMe: true }, status: WA_STATUS.DELIVERY_ACK };
    expect(receiptsFoldedInto(direct)).toEqual([{ type: 'receipt', waMessageId: '3EB0DD', chatJid: ALICE, status: 'delivered' }]);
    // a fresh echo (pending, server ack) and a contact's message carry none
    expect(receiptsFoldedInto({ key: direct.key, status: WA_STATUS.SERVER_ACK })).toEqual([]);
    expect(receiptsFoldedInto({ key: { ...key, fromMe: false }, userReceipt: echo.userReceipt })).toEqual([]);
  });
});

describe('reactions (messages.reaction)', () => {
  it('a group member reacts to our message; the reaction key names the reactor', () => {
    const reaction: BaileysEventMap['messages.reaction'][number] = {
      key: { id: '3EB0CC', remoteJid: GROUP, fromMe: true },
      reaction: { text: '❤️', key: { id: 'R1', remoteJid: GROUP, participant: '98765432109876@lid', participantAlt: BOB, fromMe: false } as proto.IMessageKey, senderTimestampMs: 1 },
    };
    expect(reactionFrom(reaction, OWN)).toEqual({ type: 'reaction', waMessageId: '3EB0CC', chatJid: GROUP, from: BOB, emoji: '❤️', fromMe: false });
  });

  it('a removed reaction has emoji "" and our own reaction from the phone is fromMe', () => {
    const reaction: BaileysEventMap['messages.reaction'][number] = { key: { id: 'IN1', remoteJid: ALICE, fromMe: false }, reaction: { text: null, key: { id: 'R2', remoteJid: ALICE, fromMe: true } } };
    expect(reactionFrom(reaction, OWN)).toEqual({ type: 'reaction', waMessageId: 'IN1', chatJid: ALICE, from: OWN, emoji: '', fromMe: true });
  });
});

describe('poll votes', () => {
  const creation: proto.IMessage = {
    pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }, { optionName: 'Salad' }], selectableOptionsCount: 2 },
    messageContextInfo: { messageSecret: new Uint8Array(32) },
  };
  const sha = (name: string) => createHash('sha256').update(name).digest();

  /** Baileys' aggregation in miniature: option hashes → names; records what it was handed. */
  function fakeAggregate() {
    const calls: Array<Pick<WAMessage, 'message' | 'pollUpdates'>> = [];
    const aggregate = (poll: Pick<WAMessage, 'message' | 'pollUpdates'>): PollOptionVotes[] => {
      calls.push(poll);
      const options = poll.message?.pollCreationMessageV3?.options ?? [];
      const votes = new Map(options.map((o) => [sha(o.optionName!).toString('hex'), { name: o.optionName!, voters: [] as string[] }]));
      for (const update of poll.pollUpdates ?? []) {
        for (const hash of update.vote?.selectedOptions ?? []) {
          const hex = Buffer.from(hash).toString('hex');
          if (!votes.has(hex)) votes.set(hex, { name: 'Unknown', voters: [] });
          votes.get(hex)!.voters.push(update.pollUpdateMessageKey?.participant ?? '');
        }
      }
      return [...votes.values()];
    };
    return { calls, aggregate };
  }

  it('hands the creation message and the vote to the aggregate function and reports the selected option names', () => {
    const { calls, aggregate } = fakeAggregate();
    const voteKey = { id: 'V1', remoteJid: GROUP, participant: BOB, fromMe: false };
    const vote: proto.Message.IPollVoteMessage = { selectedOptions: [sha('Sushi'), sha('Salad'), sha('not an option')] };
    const event = pollVoteFrom({ creation, pollKey: { id: '3EB0PP', remoteJid: GROUP, fromMe: true }, chatJid: GROUP, voteKey, vote }, aggregate, OWN);
    expect(calls).toEqual([{ message: creation, pollUpdates: [{ pollUpdateMessageKey: voteKey, vote }] }]);
    expect(event).toEqual({ type: 'poll-vote', pollWaMessageId: '3EB0PP', chatJid: GROUP, voter: BOB, selectedOptions: ['Sushi', 'Salad'] });
  });

  it('a withdrawn vote selects nothing', () => {
    const { aggregate } = fakeAggregate();
    const event = pollVoteFrom({ creation, pollKey: { id: '3EB0PP', remoteJid: ALICE, fromMe: true }, chatJid: ALICE, voteKey: { id: 'V2', remoteJid: ALICE, fromMe: false }, vote: { selectedOptions: [] } }, aggregate, OWN);
    expect(event).toEqual({ type: 'poll-vote', pollWaMessageId: '3EB0PP', chatJid: ALICE, voter: ALICE, selectedOptions: [] });
  });

  it('a stored message that is not a poll gives no vote', () => {
    const { aggregate } = fakeAggregate();
    expect(pollVoteFrom({ creation: { conversation: 'x' }, pollKey: { id: 'X' }, chatJid: ALICE, voteKey: { id: 'V', remoteJid: ALICE }, vote: { selectedOptions: [] } }, aggregate, OWN)).toBeNull();
  });
});

describe('presence, calls and groups', () => {
  it('presence.update → one presence per participant', () => {
    const update: BaileysEventMap['presence.update'] = {
      id: GROUP,
      presences: { [BOB]: { lastKnownPresence: 'composing' }, '15550004444:3@s.whatsapp.net': { lastKnownPresence: 'recording' } },
    };
    expect(presencesFrom(update)).toEqual([
      { type: 'presence', chatJid: GROUP, jid: BOB, presence: 'composing' },
      { type: 'presence', chatJid: GROUP, jid: '15550004444@s.whatsapp.net', presence: 'recording' },
    ]);
    expect(presencesFrom({ id: ALICE, presences: { [ALICE]: { lastKnownPresence: 'available', lastSeen: 1 } } })).toEqual([
      { type: 'presence', chatJid: ALICE, jid: ALICE, presence: 'available' },
    ]);
    expect(presencesFrom({ id: ALICE, presences: { [ALICE]: { lastKnownPresence: 'paused' } } })[0]).toMatchObject({ presence: 'paused' });
    expect(presencesFrom({ id: ALICE, presences: { [ALICE]: { lastKnownPresence: 'unavailable' } } })[0]).toMatchObject({ presence: 'unavailable' });
  });

  it('call: the offer is an incoming call (caller by number), the rest of the call is not', () => {
    const offer: WACallEvent = { chatId: '98765@lid', from: '98765@lid', callerPn: ALICE, id: 'CALL1', date: new Date(0), isVideo: true, isGroup: false, status: 'offer', offline: false };
    expect(callFrom(offer)).toEqual({ type: 'call', callId: 'CALL1', from: ALICE, isVideo: true, isGroup: false });
    expect(callFrom({ ...offer, status: 'terminate' })).toBeNull();
    expect(callFrom({ ...offer, status: 'ringing' })).toBeNull();
  });

  it('groups.update → group-update with only what changed', () => {
    const subject: Partial<GroupMetadata> = { id: GROUP, subject: 'New name', author: BOB };
    const settings: Partial<GroupMetadata> = { id: GROUP, announce: true, restrict: false, desc: 'rules' };
    expect(groupUpdateFrom(subject)).toEqual({ type: 'group-update', groupJid: GROUP, changes: { subject: 'New name' }, actor: BOB });
    expect(groupUpdateFrom(settings)).toEqual({ type: 'group-update', groupJid: GROUP, changes: { description: 'rules', isAnnounce: true, isLocked: false } });
    expect(groupUpdateFrom({ id: GROUP, ephemeralDuration: 86400 })).toBeNull();
  });

  it.each(['add', 'remove', 'promote', 'demote'] as const)('group-participants.update %s → group-participants, members by number, the network ids kept', (action) => {
    const update: BaileysEventMap['group-participants.update'] = {
      id: GROUP,
      author: '98765@lid',
      action,
      participants: [{ id: '11111@lid', phoneNumber: ALICE, admin: null }, { id: BOB }],
    };
    expect(groupParticipantsFrom(update)).toEqual({
      type: 'group-participants',
      groupJid: GROUP,
      action,
      participants: [ALICE, BOB],
      network: [{ id: '11111@lid', phoneNumber: ALICE, admin: null }, { id: BOB }],
      actor: '98765@lid',
    });
  });

  it('a member changing number (modify) is not a participants event', () => {
    expect(groupParticipantsFrom({ id: GROUP, author: BOB, action: 'modify', participants: [{ id: BOB }] })).toBeNull();
  });

  // Baileys' own groupMetadata() answers, as extractGroupMetadata builds them (addressingMode is a string enum there)
  const LID_MODE = 'lid' as GroupMetadata['addressingMode'];
  const PN_MODE = 'pn' as GroupMetadata['addressingMode'];
  const ALICE_LID = '11111111111111@lid';
  const OWN_LID = '98765432109876@lid';
  const lidGroup: GroupMetadata = {
    id: GROUP,
    addressingMode: LID_MODE,
    subject: 'Team',
    desc: 'd',
    owner: OWN_LID,
    ownerPn: OWN,
    announce: true,
    restrict: false,
    size: 2,
    participants: [
      { id: OWN_LID, phoneNumber: OWN, admin: 'superadmin' },
      { id: ALICE_LID, phoneNumber: ALICE, admin: null },
    ],
  };
  const pnGroup: GroupMetadata = {
    ...lidGroup,
    addressingMode: PN_MODE,
    owner: OWN,
    ownerPn: undefined,
    participants: [
      { id: OWN, lid: OWN_LID, admin: 'superadmin' },
      { id: ALICE, admin: null },
    ],
  };
  /** what the store gives back: the group through JSON (jsonb) */
  const stored = (meta: GroupMetadata) => JSON.parse(JSON.stringify(groupInfoFrom(meta, OWN)));

  it('a LID-addressed group whose numbers are all known: the API sees numbers, a send is addressed lid with the LIDs', () => {
    const info = groupInfoFrom(lidGroup, OWN);
    expect(info).toMatchObject({ groupJid: GROUP, ownerJid: OWN, participants: [OWN, ALICE] });
    const meta = groupMetadataFrom(stored(lidGroup))!;
    expect(meta.addressingMode).toBe(LID_MODE);
    expect(meta.participants.map((p: GroupParticipant) => p.id)).toEqual([OWN_LID, ALICE_LID]);
    expect(meta).toEqual({
      id: GROUP,
      subject: 'Team',
      desc: 'd',
      owner: OWN,
      announce: true,
      restrict: false,
      addressingMode: LID_MODE,
      participants: lidGroup.participants,
    });
  });

  it('a phone-number-addressed group is answered pn with the numbers it gave (and the LIDs it told)', () => {
    const meta = groupMetadataFrom(stored(pnGroup))!;
    expect(meta.addressingMode).toBe(PN_MODE);
    expect(meta.participants).toEqual(pnGroup.participants);
  });

  it('the mode is never guessed: a group stored without its network form has no answer; a network that named no mode is passed on without one', () => {
    const { network: _network, ...withoutNetwork } = groupInfoFrom(lidGroup, OWN);
    expect(groupMetadataFrom(withoutNetwork)).toBeUndefined();
    expect(groupMetadataFrom({ ...withoutNetwork, network: null })).toBeUndefined();
    // members by LID alone do not make a mode either
    expect(groupMetadataFrom({ ...withoutNetwork, participants: [ALICE_LID] })).toBeUndefined();
    const unnamed: GroupMetadata = { id: GROUP, subject: 'x', owner: undefined, participants: [{ id: ALICE }] };
    const meta = groupMetadataFrom(stored(unnamed))!;
    expect(meta).not.toHaveProperty('addressingMode');
    expect(meta.participants).toEqual([{ id: ALICE }]);
  });

  it('a whole group in groups.update (the refresh of every group) carries its network form; a change of a few fields does not', () => {
    expect(isWholeGroup(lidGroup)).toBe(true);
    expect(isWholeGroup({ id: GROUP, subject: 'New name' })).toBe(false);
    expect(isWholeGroup({ id: GROUP, announce: true })).toBe(false);
    // Baileys' refresh of communities emits there too, with no addressing mode read: not taken as a whole group
    const community: Partial<GroupMetadata> = { id: GROUP, subject: 'Community', participants: [{ id: ALICE_LID, admin: null }], addressingMode: undefined };
    expect(isWholeGroup(community)).toBe(false);
    expect(groupUpdateFrom(community)).toEqual({ type: 'group-update', groupJid: GROUP, changes: { subject: 'Community' } });

    expect(groupUpdateFrom(lidGroup)).toEqual({
      type: 'group-update',
      groupJid: GROUP,
      changes: { subject: 'Team', description: 'd', isAnnounce: true, isLocked: false },
      network: { addressingMode: 'lid', participants: lidGroup.participants },
    });
  });
});
