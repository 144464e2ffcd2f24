import { Readable } from 'node:stream';
import { DomainError } from '@app/contracts';
import type { MessageRow, MessagesRepository, SessionsRepository } from '@app/database';
import { MediaUnavailableError, type MediaSource } from '@app/media';
import { MessagesService } from './messages.service';

/** GET …/media of an inbound message: what the network's answer becomes for the caller. */
describe('MessagesService.media', () => {
  const inbound = {
    id: 'msg_1',
    direction: 'in',
    media: { mimetype: 'image/jpeg', size: 3, filename: null, caption: null },
    mediaRef: { engine: 'sim', mediaId: 'm1' },
  } as unknown as MessageRow;
  const service = (open: MediaSource['open']) =>
    new MessagesService(
      { findInOrganization: async () => ({ id: 'ses_1' }) } as unknown as SessionsRepository,
      { findInOrganization: async () => inbound } as unknown as MessagesRepository,
      null as never,
      null as never,
      null as never,
      { open },
      null as never,
      null as never,
    );
  const codeOf = (err: unknown) => (err instanceof DomainError ? err.code : String(err));

  it('streams the bytes the network holds', async () => {
    const got = await service(async () => Readable.from([Buffer.from('abc')])).media('org_1', 'ses_1', 'msg_1');
    expect(got).toMatchObject({ mimetype: 'image/jpeg', length: 3 });
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
