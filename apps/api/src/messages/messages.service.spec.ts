import { Readable } from 'node:stream';
import { DomainError } from '@app/contracts';
import type { MessageQueueRepository, MessageRow, MessagesRepository, SessionsRepository } from '@app/database';
import { MediaUnavailableError, type MediaSource, type MediaStore } from '@app/media';
import { MessagesService } from './messages.service';
import { MessageLogService } from './message-log.service';
import { MediaReupload } from './media-reupload';
import type { SessionActions } from '../sessions/session-actions';

/** GET …/media of an inbound message: what the network's answer becomes for the caller. */
describe('MessageLogService.media', () => {
  const inbound = {
    id: 'msg_1',
    direction: 'in',
    media: { mimetype: 'image/jpeg', size: 3, filename: null, caption: null },
    mediaRef: { engine: 'sim', mediaId: 'm1' },
  } as unknown as MessageRow;
  const service = (open: MediaSource['open'], store?: Partial<MediaStore>) =>
    new MessageLogService(
      { findInOrganization: async () => ({ id: 'ses_1' }) } as unknown as SessionsRepository,
      { findInSession: async () => inbound } as unknown as MessagesRepository,
      { open },
      new MediaReupload(null as never, null as never, { open }),
      (store ?? null) as MediaStore | null,
    );
  const codeOf = (err: unknown) => (err instanceof DomainError ? err.code : String(err));

  it('streams the bytes the network holds', async () => {
    const got = await service(async () => Readable.from([Buffer.from('abc')])).media('org_1', 'ses_1', 'msg_1');
    expect(got).toMatchObject({ mimetype: 'image/jpeg', length: 3 });
  });

  it('serves the bytes a gateway kept in the media store without asking the network', async () => {
    const asked: unknown[] = [];
    const kept = Buffer.from('kept bytes');
    const got = await service(async (ref) => (asked.push(ref), Readable.from([Buffer.from('abc')])), {
      kind: 'postgres',
      get: async (key) => (key.messageId === 'msg_1' ? { mimetype: 'image/jpeg', size: kept.length, sha256: '', bytes: kept } : null),
    }).media('org_1', 'ses_1', 'msg_1');
    expect(got).toEqual({ body: kept, mimetype: 'image/jpeg', length: kept.length, filename: null });
    expect(asked).toEqual([]);
  });

  it('asks the network when the store has nothing or fails', async () => {
    const network = async () => Readable.from([Buffer.from('abc')]);
    const empty = await service(network, { kind: 's3', get: async () => null }).media('org_1', 'ses_1', 'msg_1');
    expect(empty.body).toBeInstanceOf(Readable);
    const broken = await service(network, { kind: 's3', get: async () => Promise.reject(new Error('bucket unreachable')) }).media('org_1', 'ses_1', 'msg_1');
    expect(broken.body).toBeInstanceOf(Readable);
  });

  it('is 404 when the network no longer has the media', async () => {
    const err = await service(async () => {
      throw new MediaUnavailableError('gone');
    }).media('org_1', 'ses_1', 'msg_1').catch((e: unknown) => e);
    expect(codeOf(err)).toBe('not_found');
  });

  it('is 503 gateway_unavailable (retry later), not a 500, when the network cannot be reached', async () => {
    const err = await service(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:4010');
    }).media('org_1', 'ses_1', 'msg_1').catch((e: unknown) => e);
    expect(codeOf(err)).toBe('gateway_unavailable');
    expect((err as DomainError).details).toMatchObject({ messageId: 'msg_1', reason: 'connect ECONNREFUSED 127.0.0.1:4010' });
  });
});

/** Issue 19 item 9: media the CDN dropped is asked of the sender's phone through the live session, then served. */
describe('MessagesService.media re-upload', () => {
  const expiredRef = { engine: 'baileys', mediaType: 'image', directPath: '/v/t62/old', mediaKey: 'a2V5', url: 'https://mmg.whatsapp.net/v/t62/old' } as const;
  const inbound = {
    id: 'msg_1',
    sessionId: 'ses_1',
    waMessageId: 'WA1',
    chatJid: '120363000000000001@g.us',
    from: '15550001111@s.whatsapp.net',
    direction: 'in',
    media: { mimetype: 'image/jpeg', size: 3, filename: null, caption: null },
    mediaRef: expiredRef,
  } as unknown as MessageRow;

  function setup(answer: () => Promise<unknown>) {
    const performed: unknown[][] = [];
    const stored: unknown[][] = [];
    const opened: unknown[] = [];
    const open: MediaSource['open'] = async (ref) => {
      opened.push(ref);
      if (ref.engine === 'baileys' && ref.directPath === '/v/t62/old') throw new MediaUnavailableError('WhatsApp no longer has this image (HTTP 410)');
      return Readable.from([Buffer.from('abc')]);
    };
    const actions = { perform: async (...args: unknown[]) => (performed.push(args), answer()) } as unknown as SessionActions;
    const messages = { findInSession: async () => inbound, updateMediaRef: async (...args: unknown[]) => (stored.push(args), true) } as unknown as MessagesRepository;
    const service = new MessageLogService(
      { findInOrganization: async () => ({ id: 'ses_1' }) } as unknown as SessionsRepository,
      messages,
      { open },
      new MediaReupload(actions, messages, { open }),
      null,
    );
    return { service, performed, stored, opened };
  }
  const codeOf = (err: unknown) => (err instanceof DomainError ? err.code : String(err));

  it('asks the phone again, stores the new reference and streams from it', async () => {
    const fresh = { ...expiredRef, directPath: '/v/t62/new', url: 'https://mmg.whatsapp.net/v/t62/new' };
    const t = setup(async () => ({ ref: fresh }));
    const got = await t.service.media('org_1', 'ses_1', 'msg_1');
    expect(got).toMatchObject({ mimetype: 'image/jpeg', length: 3 });
    expect(t.performed).toEqual([
      ['org_1', 'ses_1', 'media.reupload', { waMessageId: 'WA1', chatJid: '120363000000000001@g.us', fromMe: false, participant: '15550001111@s.whatsapp.net', ref: expiredRef }],
    ]);
    expect(t.stored).toEqual([['msg_1', fresh]]);
    expect(t.opened).toEqual([expiredRef, fresh]);
  });

  it('is 404 when the phone no longer has it; 409 / 503 from the session pass through', async () => {
    const gone = setup(async () => Promise.reject(new DomainError('not_found', "the sender's phone could not upload the media again")));
    const err = await gone.service.media('org_1', 'ses_1', 'msg_1').catch((e: unknown) => e);
    expect(codeOf(err)).toBe('not_found');
    expect((err as Error).message).toContain('HTTP 410');
    expect(gone.stored).toEqual([]);
    for (const code of ['conflict', 'gateway_unavailable'] as const) {
      const t = setup(async () => Promise.reject(new DomainError(code, 'session not working')));
      expect(codeOf(await t.service.media('org_1', 'ses_1', 'msg_1').catch((e: unknown) => e))).toBe(code);
    }
  });
});

/**
 * Issue 37 item 7: a plain send that races a session's move. The accept statement refuses it while the session is
 * `starting` on its new gateway; the read that explains the refusal finds it `working` again. That answered 500.
 */
describe('MessagesService.send racing a move between gateways', () => {
  const principal = { organizationId: 'org_1' } as unknown as Parameters<MessagesService['send']>[0];
  function setup(refusals: number, statuses: SessionStatusOf[]) {
    const released: string[] = [];
    const inserts: string[][] = [];
    const reads = [...statuses];
    const queue = {
      insertAcceptedMany: async (_org: string, _ses: string, group: Array<{ message: { id: string } }>) => {
        inserts.push(group.map((g) => g.message.id));
        if (inserts.length <= refusals) return { rows: new Map(), gatewayId: null };
        const rows = new Map(group.map((g) => [g.message.id, { ...g.message, status: 'queued' } as unknown as MessageRow]));
        return { rows, gatewayId: 'gw-new' };
      },
    } as unknown as MessageQueueRepository;
    const sessions = {
      findInOrganization: async () => ({ id: 'ses_1', organizationId: 'org_1', status: reads.shift() ?? 'working', ratePerMin: 60, ratePerHour: 1000 }),
    } as unknown as SessionsRepository;
    const limiter = {
      tryAcceptKept: async () => ({ accepted: true, at: 0 }),
      release: async (_s: string, id: string) => void released.push(id),
    };
    const signalled: string[] = [];
    const signal = { notify: async (_r: unknown, gatewayId: string) => void signalled.push(gatewayId) };
    const service = new MessagesService(sessions, null as never, queue, limiter as never, signal as never, null as never, null as never, null as never);
    const send = () => service.send(principal, 'ses_1', { to: '15550001111', text: 'hi' }, undefined).catch((e: unknown) => e);
    return { send, released, inserts, signalled };
  }
  type SessionStatusOf = 'working' | 'starting' | 'reconnecting' | 'stopped';

  it('refused while the session was starting, read working: offered again and accepted (202) for the new holder, counted once', async () => {
    const t = setup(1, ['working']);
    const got = await t.send();
    expect(got).toMatchObject({ sessionId: 'ses_1', status: 'queued', text: 'hi' });
    expect(t.inserts).toHaveLength(2);
    expect(t.inserts[0]).toEqual(t.inserts[1]);
    expect(t.released).toEqual([]);
    expect(t.signalled).toEqual(['gw-new']);
  });

  it('read not sendable: 409 with the status, its slot given back, nothing stored', async () => {
    const t = setup(1, ['starting']);
    const err = await t.send();
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'conflict', details: { status: 'starting' } });
    expect(t.inserts).toHaveLength(1);
    expect(t.released).toHaveLength(1);
  });

  it('still changing state after every try: 409, never a 500', async () => {
    const t = setup(10, ['working', 'working', 'working']);
    const err = await t.send();
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'conflict', details: { status: 'working' } });
    expect(t.inserts).toHaveLength(3);
    expect(t.released).toHaveLength(1);
  });
});
