import { createDecipheriv, createHash, createHmac } from 'node:crypto';
import type { proto } from '@whiskeysockets/baileys';
import { DomainError, type OutboundMessage } from '@app/contracts';
import { encryptPollVote, messageContentFor, outboundFor, urlInfoFor } from './baileys-outbound';

const OWN = '15550001111@s.whatsapp.net';
const ALICE = '15550002222@s.whatsapp.net';
const POLL_KEY = { waMessageId: '3EB0POLL', chatJid: ALICE, fromMe: true, participant: null };
const SECRET = Buffer.alloc(32, 7);
const IV = Buffer.alloc(12, 3);
/** the spec's codec: "stored bytes" are JSON of the proto object (the engine's real codec is proto.Message's) */
const codec = {
  encode: (m: proto.IMessage) => Buffer.from(JSON.stringify(m)),
  decode: (b: Uint8Array) => JSON.parse(Buffer.from(b).toString()) as proto.IMessage,
};
const message = (content: OutboundMessage['content']): OutboundMessage => ({ waMessageId: '3EB0NEW', to: ALICE, content, quoted: null, mentions: [] });

/**
 * Baileys' decryptPollVote (Utils/process-message.js), written out: what every phone that receives the vote runs. Jest
 * cannot load Baileys (ESM), so the spec holds the algorithm; the engine's encryption must round-trip through it.
 */
function decryptLikeBaileys(encPayload: Buffer, encIv: Buffer, ctx: { pollCreatorJid: string; pollMsgId: string; pollEncKey: Buffer; voterJid: string }): Buffer {
  const sign = Buffer.concat([Buffer.from(ctx.pollMsgId), Buffer.from(ctx.pollCreatorJid), Buffer.from(ctx.voterJid), Buffer.from('Poll Vote'), new Uint8Array([1])]);
  const key0 = createHmac('sha256', new Uint8Array(32)).update(ctx.pollEncKey).digest();
  const decKey = createHmac('sha256', key0).update(sign).digest();
  const decipher = createDecipheriv('aes-256-gcm', decKey, encIv);
  decipher.setAAD(Buffer.from(`${ctx.pollMsgId}\u0000${ctx.voterJid}`));
  decipher.setAuthTag(encPayload.subarray(encPayload.length - 16));
  return Buffer.concat([decipher.update(encPayload.subarray(0, encPayload.length - 16)), decipher.final()]);
}

/** PollVoteMessage's repeated bytes field 1, read back. */
function selectedOptionsOf(pollVote: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < pollVote.length; ) {
    expect(pollVote[i]).toBe(0x0a);
    const len = pollVote[i + 1];
    out.push(pollVote.subarray(i + 2, i + 2 + len));
    i += 2 + len;
  }
  return out;
}
const sha = (s: string) => createHash('sha256').update(s).digest();

describe('Baileys outbound content (CONTRACT 12 send types)', () => {
  it('sends a voice note as Opus push-to-talk and a sticker as a sticker', () => {
    const media = { data: Buffer.from('bytes'), mimetype: 'audio/mpeg', filename: null };
    expect(messageContentFor({ type: 'voice', media }, [])).toEqual({ audio: media.data, mimetype: 'audio/ogg; codecs=opus', ptt: true });
    expect(messageContentFor({ type: 'sticker', media: { ...media, mimetype: 'image/webp' } }, [])).toEqual({ sticker: media.data });
  });

  it('gives a text our link preview, and null without one so Baileys never fetches a page itself', () => {
    const preview = { url: 'https://example.com/a', title: 'A', description: 'about a', imageUrl: 'https://example.com/a.jpg', thumbnailBase64: Buffer.from('jpg').toString('base64') };
    expect(messageContentFor({ type: 'text', text: 'see https://example.com/a', linkPreview: preview }, [])).toEqual({
      text: 'see https://example.com/a',
      linkPreview: urlInfoFor(preview),
    });
    expect(urlInfoFor(preview)).toEqual({
      'canonical-url': 'https://example.com/a',
      'matched-text': 'https://example.com/a',
      title: 'A',
      description: 'about a',
      jpegThumbnail: Buffer.from('jpg'),
      originalThumbnailUrl: 'https://example.com/a.jpg',
    });
    expect(messageContentFor({ type: 'text', text: 'see https://example.com/a' }, [])).toEqual({ text: 'see https://example.com/a', linkPreview: null });
  });

  it('forwards the stored original through Baileys, forced so even an own message is marked forwarded', () => {
    const original = { conversation: 'worth sharing' };
    const key = { waMessageId: '3EB0ORIG', chatJid: ALICE, fromMe: false, participant: null };
    const prepared = outboundFor(message({ type: 'forward', original: key }), { ownJid: OWN, stored: codec.encode(original), decode: codec.decode });
    expect(prepared).toEqual({ content: { forward: { key: { remoteJid: ALICE, id: '3EB0ORIG', fromMe: false }, message: original }, force: true } });
    expect(() => outboundFor(message({ type: 'forward', original: key }), { ownJid: OWN, stored: null, decode: codec.decode })).toThrow(DomainError);
  });

  it('encrypts a poll vote as the phones decrypt it: option hashes under the poll secret, voter and creator', () => {
    const poll = { pollCreationMessageV3: { name: 'Lunch?' }, messageContextInfo: { messageSecret: SECRET.toString('base64') } };
    // JSON turns the secret into base64; the real codec gives bytes
    const decode = (b: Uint8Array) => {
      const m = codec.decode(b) as unknown as { messageContextInfo: { messageSecret: string } };
      return { ...m, messageContextInfo: { messageSecret: Buffer.from(m.messageContextInfo.messageSecret, 'base64') } } as proto.IMessage;
    };
    const prepared = outboundFor(message({ type: 'pollVote', poll: POLL_KEY, options: ['sushi', 'salad'] }), { ownJid: OWN, stored: codec.encode(poll as unknown as proto.IMessage), decode, iv: IV, now: 1234 });
    expect('relay' in prepared).toBe(true);
    const update = (prepared as { relay: proto.IMessage }).relay.pollUpdateMessage!;
    expect(update.pollCreationMessageKey).toEqual({ remoteJid: ALICE, id: '3EB0POLL', fromMe: true });
    expect(update.senderTimestampMs).toBe(1234);
    expect(update.vote!.encIv).toEqual(IV);
    const plain = decryptLikeBaileys(update.vote!.encPayload as Buffer, IV, { pollCreatorJid: OWN, pollMsgId: '3EB0POLL', pollEncKey: SECRET, voterJid: OWN });
    expect(selectedOptionsOf(plain)).toEqual([sha('sushi'), sha('salad')]);
  });

  it('addresses a vote on a contact’s poll to its creator, and refuses a poll without its secret', () => {
    const theirs = { ...POLL_KEY, fromMe: false };
    const payload = encryptPollVote(['yes'], { pollCreatorJid: ALICE, pollMsgId: '3EB0POLL', pollEncKey: SECRET, voterJid: OWN }, IV);
    const plain = decryptLikeBaileys(payload, IV, { pollCreatorJid: ALICE, pollMsgId: '3EB0POLL', pollEncKey: SECRET, voterJid: OWN });
    expect(selectedOptionsOf(plain)).toEqual([sha('yes')]);
    // a wrong creator cannot decrypt: the derivation binds it
    expect(() => decryptLikeBaileys(payload, IV, { pollCreatorJid: OWN, pollMsgId: '3EB0POLL', pollEncKey: SECRET, voterJid: OWN })).toThrow();
    const noSecret = codec.encode({ pollCreationMessageV3: { name: 'x' } } as proto.IMessage);
    expect(() => outboundFor(message({ type: 'pollVote', poll: theirs, options: ['yes'] }), { ownJid: OWN, stored: noSecret, decode: codec.decode })).toThrow(/no message secret/);
    expect(() => outboundFor(message({ type: 'pollVote', poll: theirs, options: ['yes'] }), { ownJid: OWN, stored: null, decode: codec.decode })).toThrow(/no stored content/);
  });
});
