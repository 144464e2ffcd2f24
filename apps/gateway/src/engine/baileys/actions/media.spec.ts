import pino from 'pino';
import type { WAMessage, WASocket } from '@whiskeysockets/baileys';
import { DomainError, type SessionActionArgs } from '@app/contracts';
import type { BaileysActionContext } from './context';
import { BAILEYS_ACTIONS } from './index';
import { mediaMessageFor } from './media';

/** A Boom as Baileys' updateMediaMessage throws it when the phone answers with an error result. */
const boom = (statusCode: number, message: string) => Object.assign(new Error(message), { isBoom: true, output: { statusCode } });

const args: SessionActionArgs<'media.reupload'> = {
  waMessageId: 'WA1',
  chatJid: '120363000000000001@g.us',
  fromMe: false,
  participant: '15550001111@s.whatsapp.net',
  ref: { engine: 'baileys', mediaType: 'document', directPath: '/v/t62/old', mediaKey: Buffer.from('the media key').toString('base64'), url: null },
};

function contextWith(updateMediaMessage: (m: WAMessage) => Promise<WAMessage>): { ctx: BaileysActionContext; asked: WAMessage[] } {
  const asked: WAMessage[] = [];
  const sock = { updateMediaMessage: async (m: WAMessage) => (asked.push(m), updateMediaMessage(m)) } as unknown as WASocket;
  return { asked, ctx: { sessionId: 's', sock, ownJid: () => null, runtime: null as never, lookups: null, emit: () => undefined, logger: pino({ level: 'silent' }) } };
}

describe('media.reupload on Baileys (issue 19 item 9)', () => {
  it('hands updateMediaMessage the stored key and media key, and answers the new direct path and URL', async () => {
    const { ctx, asked } = contextWith(async (m) => {
      // Baileys writes the decrypted new path into the content it was given
      m.message!.documentMessage!.directPath = '/v/t62/new';
      m.message!.documentMessage!.url = 'https://mmg.whatsapp.net/v/t62/new';
      return m;
    });
    const result = await BAILEYS_ACTIONS['media.reupload'](ctx, args);
    expect(result).toEqual({ ref: { ...args.ref, directPath: '/v/t62/new', url: 'https://mmg.whatsapp.net/v/t62/new' } });
    expect(asked[0].key).toEqual({ remoteJid: args.chatJid, id: 'WA1', fromMe: false, participant: args.participant });
    expect(Buffer.from(asked[0].message!.documentMessage!.mediaKey!).toString()).toBe('the media key');
    expect(mediaMessageFor({ ...args, participant: null, ref: { ...args.ref, mediaType: 'sticker' } }).message).toHaveProperty('stickerMessage');
  });

  it("is not_found when the phone no longer has the file (404) or cannot decrypt the request (412); other errors pass", async () => {
    for (const status of [404, 412]) {
      const { ctx } = contextWith(async () => Promise.reject(boom(status, 'Media re-upload failed by device')));
      const err = await Promise.resolve(BAILEYS_ACTIONS['media.reupload'](ctx, args)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('not_found');
    }
    const { ctx } = contextWith(async () => Promise.reject(boom(428, 'Connection Closed')));
    await expect(Promise.resolve(BAILEYS_ACTIONS['media.reupload'](ctx, args))).rejects.toThrow('Connection Closed');
  });

  it('is not_found when the phone does not answer in time', async () => {
    jest.useFakeTimers();
    try {
      const { ctx } = contextWith(() => new Promise<WAMessage>(() => undefined));
      const pending = Promise.resolve(BAILEYS_ACTIONS['media.reupload'](ctx, args)).catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(20_000);
      const err = await pending;
      expect((err as DomainError).code).toBe('not_found');
      expect((err as Error).message).toContain('did not answer');
    } finally {
      jest.useRealTimers();
    }
  });

  it("keeps nothing of the phone's answer that could aim the download elsewhere (issue 37)", async () => {
    // a stored url off WhatsApp's CDN is not handed to Baileys (it would build the new url on that host)
    const sent = mediaMessageFor({ ...args, ref: { ...args.ref, url: 'https://127.0.0.1:6379/v/t62/old' } });
    expect(sent.message!.documentMessage!.url).toBeUndefined();
    for (const directPath of ['@127.0.0.1:6379/v/t62/new', '.evil.example/v', 'v/t62/new']) {
      const { ctx } = contextWith(async (m) => ((m.message!.documentMessage!.directPath = directPath), m));
      const err = await Promise.resolve(BAILEYS_ACTIONS['media.reupload'](ctx, args)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).message).toContain('direct path that is not a path');
    }
    const { ctx } = contextWith(async (m) => {
      m.message!.documentMessage!.directPath = '/v/t62/new';
      m.message!.documentMessage!.url = 'https://mmg.whatsapp.net@127.0.0.1:6379/v/t62/new';
      return m;
    });
    expect(await BAILEYS_ACTIONS['media.reupload'](ctx, args)).toEqual({ ref: { ...args.ref, directPath: '/v/t62/new', url: null } });
  });
});
