import pino from 'pino';
import { Readable } from 'node:stream';
import type { MessageRow } from '@app/database';
import { MediaUnavailableError, type MediaStore, type MediaStoreKey, type StoredMedia } from '@app/media';
import { EagerMediaDownloads } from './eager-media-downloads';

const row = (fields: Partial<MessageRow> = {}): MessageRow =>
  ({
    id: 'msg_1',
    organizationId: 'org_1',
    sessionId: 'ses_1',
    direction: 'in',
    media: { mimetype: 'image/jpeg', size: 5, filename: null, caption: null },
    mediaRef: { engine: 'sim', mediaId: 'm1' },
    ...fields,
  }) as MessageRow;

/** A MediaStore in memory. */
class MemoryStore implements MediaStore {
  readonly kind = 'postgres' as const;
  readonly kept = new Map<string, StoredMedia>();
  put = async (k: MediaStoreKey, m: StoredMedia) => void this.kept.set(k.messageId, m);
  get = async (k: MediaStoreKey) => this.kept.get(k.messageId) ?? null;
  has = async (k: MediaStoreKey) => this.kept.has(k.messageId);
  forget = async (k: MediaStoreKey) => void this.kept.delete(k.messageId);
  forgetSession = async () => undefined;
  forgetOrganization = async () => undefined;
  close = async () => undefined;
}

function setup(opts: { rows?: Array<MessageRow | null>; bytes?: Buffer; open?: () => Promise<Readable>; maxBytes?: number } = {}) {
  const store = new MemoryStore();
  const rows = [...(opts.rows ?? [row()])];
  const added: string[] = [];
  const opened: unknown[] = [];
  const downloads = new EagerMediaDownloads(
    { add: async (id: string) => void added.push(id), worker: () => null as never, close: async () => undefined },
    store,
    { open: async (ref) => (opened.push(ref), opts.open ? opts.open() : Readable.from([opts.bytes ?? Buffer.from('hello')])) },
    // each read of the row takes the next one (the last one repeats): a message deleted meanwhile reads as null
    { findById: async () => (rows.length > 1 ? rows.shift()! : rows[0]) },
    { maxBytes: opts.maxBytes ?? 1024, concurrency: 1 },
    pino({ level: 'silent' }),
  );
  return { downloads, store, added, opened };
}

describe('EagerMediaDownloads', () => {
  it('queues inbound media messages only', () => {
    const t = setup();
    t.downloads.received(row());
    t.downloads.received(row({ id: 'msg_2', media: null, mediaRef: null }));
    t.downloads.received(row({ id: 'msg_3', direction: 'out' }));
    expect(t.added).toEqual(['msg_1']);
  });

  it('a queue that refuses does not reach the inbound path', () => {
    const t = setup();
    const failing = new EagerMediaDownloads(
      { add: async () => Promise.reject(new Error('redis down')), worker: () => null as never, close: async () => undefined },
      t.store, { open: async () => Readable.from([]) }, { findById: async () => null }, { maxBytes: 1, concurrency: 1 }, pino({ level: 'silent' }),
    );
    expect(() => failing.received(row())).not.toThrow();
  });

  it('stores the bytes with their sha256, once', async () => {
    const t = setup({ bytes: Buffer.from('hello') });
    expect(await t.downloads.download('msg_1')).toBe('stored');
    expect(t.store.kept.get('msg_1')).toEqual({
      mimetype: 'image/jpeg', size: 5, sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', bytes: Buffer.from('hello'),
    });
    expect(await t.downloads.download('msg_1')).toBe('already-stored');
    expect(t.opened).toHaveLength(1);
  });

  it('keeps nothing larger than the maximum: declared, or found while streaming', async () => {
    const declared = setup({ rows: [row({ media: { mimetype: 'video/mp4', size: 5000, filename: null, caption: null } })], maxBytes: 1024 });
    expect(await declared.downloads.download('msg_1')).toBe('too-large');
    expect(declared.opened).toEqual([]);
    const streamed = setup({ bytes: Buffer.alloc(2000), maxBytes: 1024 });
    expect(await streamed.downloads.download('msg_1')).toBe('too-large');
    expect(streamed.store.kept.size).toBe(0);
  });

  it('a message deleted before or while its download ran leaves nothing in the store', async () => {
    expect(await setup({ rows: [null] }).downloads.download('msg_1')).toBe('gone');
    const meanwhile = setup({ rows: [row(), null] });
    expect(await meanwhile.downloads.download('msg_1')).toBe('gone');
    expect(meanwhile.store.kept.size).toBe(0);
  });

  it('a refused write is gone when its message is (a foreign key), and retried when the message is still there', async () => {
    const refusing = (rows: Array<MessageRow | null>) => {
      const t = setup({ rows });
      t.store.put = async () => Promise.reject(new Error('refused'));
      return t;
    };
    expect(await refusing([row(), null]).downloads.download('msg_1')).toBe('gone');
    await expect(refusing([row()]).downloads.download('msg_1')).rejects.toThrow('refused');
  });

  it('a network that no longer has the media fails for good; any other failure is left to the retries', async () => {
    await expect(setup({ open: async () => Promise.reject(new MediaUnavailableError('expired')) }).downloads.download('msg_1')).rejects.toBeInstanceOf(MediaUnavailableError);
    await expect(setup({ open: async () => Promise.reject(new Error('ECONNREFUSED')) }).downloads.download('msg_1')).rejects.toThrow('ECONNREFUSED');
  });
});
