import pino from 'pino';
import type { CatalogEvent } from '@app/contracts';
import { takeAccountExtrasEvent } from './account-extras-events';

describe('takeAccountExtrasEvent', () => {
  const status = { waMessageId: 'S1', from: '15550000002@s.whatsapp.net', type: 'text', text: 'hi', media: null, timestamp: 1 };
  const run = async (receiveStatus: boolean | undefined, event: Parameters<typeof takeAccountExtrasEvent>[0]) => {
    const published: CatalogEvent[] = [];
    await takeAccountExtrasEvent(event, {
      sessionId: 'ses_1',
      records: { find: async () => ({ id: 'ses_1', organizationId: 'org_1', status: 'working', desiredState: 'running', phoneNumber: null, autoRead: true, presenceTyping: false, receiveStatus }) },
      publish: async (e) => void published.push(e),
      logger: pino({ level: 'silent' }),
    });
    return published;
  };

  it('announces a contact’s status only while receiveStatus is on (absent = off)', async () => {
    expect(await run(true, { type: 'status', status })).toEqual([{ event: 'status.received', payload: status }]);
    expect(await run(false, { type: 'status', status })).toEqual([]);
    expect(await run(undefined, { type: 'status', status })).toEqual([]);
  });

  it('announces label changes and channel posts whatever the setting', async () => {
    const change = { action: 'edited' as const, labelId: '1', label: { id: '1', name: 'A', color: 0 }, chatJid: null };
    const post = { channelJid: '1@newsletter', serverId: '9', text: 't', type: 'text', timestamp: 1 };
    expect(await run(false, { type: 'label', change })).toEqual([{ event: 'label.update', payload: change }]);
    expect(await run(false, { type: 'channel-message', post })).toEqual([{ event: 'channel.message', payload: post }]);
  });
});
