import { createServer, type AddressInfo, type Server } from 'node:net';
import { loadRunContext } from './support/run-context';

process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:media-ref-${process.pid}`;

import { newId } from '@app/database';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, freePort, startApp } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, seedStoppedSession, testDataSource } from './support/seed';

/**
 * Issue 37 item 2: a WhatsApp contact writes an inbound message's media reference, and Baileys builds the download from
 * it. Through a real API process (real Baileys downloadContentFromMessage, no test seam) a reference aimed at a
 * loopback listener is refused with a clear 404 and the listener sees no connection.
 */
describe('a crafted media reference', () => {
  let apiProcess: AppProcess;
  let apiUrl: string;
  let org: SeededOrg;
  let listener: Server;
  let connections = 0;
  const api = () => request(apiUrl);

  beforeAll(async () => {
    listener = createServer((socket) => ((connections += 1), socket.destroy()));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    apiProcess = await startApp('api', { PORT: String(port), MEDIA_STORE: 'none' }, `${apiUrl}/healthz`);
    org = await seedOrganization('Media Reference Inc');
  }, 60000);

  afterAll(async () => {
    await apiProcess?.stop();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    await closeTestDataSource();
  });

  it('is refused with a clear error, and opens no connection, whatever part of it aims inward', async () => {
    const port = (listener.address() as AddressInfo).port;
    const session = await seedStoppedSession(org.id, 'Received');
    const db = await testDataSource();
    const inbound = async (ref: { directPath: string; url: string | null }) => {
      const id = newId('msg');
      await db.query(
        `INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, media, media_ref, status)
         VALUES ($1, $2, $3, $4, 'in', $5, $5, 'image', $6, $7, 'received')`,
        [
          id, org.id, session.id, `IN${id}`, '15550001111@s.whatsapp.net',
          JSON.stringify({ mimetype: 'image/jpeg', size: 11, filename: null, caption: null }),
          JSON.stringify({ engine: 'baileys', mediaType: 'image', mediaKey: Buffer.alloc(32, 1).toString('base64'), ...ref }),
        ],
      );
      return id;
    };
    const crafted = [
      { directPath: '/v/t62.7118-24/x.enc', url: `https://127.0.0.1:${port}/v/t62.7118-24/x.enc` },
      { directPath: '/v/t62.7118-24/x.enc', url: `https://localhost:${port}/v/t62.7118-24/x.enc` },
      { directPath: `@127.0.0.1:${port}/v/t62.7118-24/x.enc`, url: null },
    ];
    for (const ref of crafted) {
      const res = await api().get(`/api/v1/sessions/${session.id}/messages/${await inbound(ref)}/media`).set(bearer(org.adminKey));
      expect({ ref, status: res.status, code: res.body.error?.code }).toEqual({ ref, status: 404, code: 'not_found' });
      expect(res.body.error.message).toMatch(/the media reference is refused: its (url names https:\/\/(127\.0\.0\.1|localhost):\d+, which is not a WhatsApp media host|directPath .* is not a path)/);
    }
    expect(connections).toBe(0);
  });
});
