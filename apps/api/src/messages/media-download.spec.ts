import { Logger } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { Readable } from 'node:stream';
import request from 'supertest';
import { mediaFile } from './media-download';

/** GET /m answers `mediaFile` of the stream `open` makes, through Nest's Express adapter as the API's route does. */
function served(open: () => Readable) {
  const adapter = new ExpressAdapter();
  const app = express();
  app.get('/m', (_req, res) => adapter.reply(res, mediaFile({ body: open(), mimetype: 'image/jpeg', length: 3000, filename: 'pic.jpg' }, 'msg_1')));
  return app;
}

/** A download whose first `good` bytes arrive, then the network (or the decryption) fails. */
const failingAfter = (good: number) => {
  let sent = false;
  return new Readable({
    read() {
      if (good > 0 && !sent) {
        sent = true;
        this.push(Buffer.alloc(good, 7));
        return;
      }
      this.destroy(new Error('the CDN closed the connection'));
    },
  });
};

describe('GET …/media answer (mediaFile)', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  it('streams the bytes with the media headers', async () => {
    const res = await request(served(() => Readable.from([Buffer.alloc(3000, 1)]))).get('/m');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.headers['content-length']).toBe('3000');
    expect(res.headers['content-disposition']).toBe("inline; filename*=UTF-8''pic.jpg");
  });

  it('a download failing before its first byte is 503 gateway_unavailable in the error envelope, without the file\'s headers', async () => {
    const res = await request(served(() => failingAfter(0))).get('/m');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.body).toEqual({
      error: {
        code: 'gateway_unavailable',
        message: expect.stringContaining('retry later'),
        details: { messageId: 'msg_1', reason: 'the CDN closed the connection' },
      },
    });
  });

  it('a stream that failed before the answer was sent is answered the same way', async () => {
    const res = await request(
      served(() => {
        const broken = new Readable({ read() {} });
        broken.on('error', () => undefined);
        broken.destroy(new Error('does not decrypt'));
        return broken;
      }),
    ).get('/m');
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'gateway_unavailable', details: { reason: 'does not decrypt' } });
  });

  it('once bytes went out the response is cut, so a truncated file never looks complete', async () => {
    await expect(request(served(() => failingAfter(1000))).get('/m').buffer(true)).rejects.toThrow();
  });
});
