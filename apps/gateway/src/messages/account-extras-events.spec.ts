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

  it('keeps the labels each chat carries with the label.update announcing it, in one transaction', async () => {
    const chats = new Map<string, Set<string>>();
    const committed: CatalogEvent[] = [];
    const calls: string[] = [];
    const store = {
      setLabel: async (_org: string, _ses: string, jid: string, labelId: string, assigned: boolean, tx?: unknown) => {
        calls.push(`set ${jid} ${labelId} ${assigned} ${String(tx)}`);
        const ids = chats.get(jid) ?? new Set<string>();
        if (assigned) ids.add(labelId);
        else ids.delete(labelId);
        chats.set(jid, ids);
      },
      dropLabel: async (_ses: string, labelId: string, tx?: unknown) => {
        calls.push(`drop ${labelId} ${String(tx)}`);
        for (const ids of chats.values()) ids.delete(labelId);
      },
    };
    const take = (change: { action: 'assigned' | 'unassigned' | 'edited' | 'deleted'; labelId: string; chatJid: string | null }) =>
      takeAccountExtrasEvent({ type: 'label', change: { ...change, label: null } }, {
        sessionId: 'ses_1',
        records: { find: async () => null },
        publish: async (e) => void committed.push(e),
        chatLabels: {
          organizationId: 'org_1',
          store,
          transact: async (work) => {
            const pending: CatalogEvent[] = [];
            const result = await work('tx1', (e) => void pending.push(e));
            committed.push(...pending);
            return result;
          },
        },
        logger: pino({ level: 'silent' }),
      });
    const CHAT = '15550000003@s.whatsapp.net';
    await take({ action: 'assigned', labelId: '2', chatJid: CHAT });
    await take({ action: 'assigned', labelId: '5', chatJid: CHAT });
    await take({ action: 'unassigned', labelId: '2', chatJid: CHAT });
    expect([...chats.get(CHAT)!]).toEqual(['5']);
    await take({ action: 'edited', labelId: '5', chatJid: null });
    await take({ action: 'deleted', labelId: '5', chatJid: null });
    expect([...chats.get(CHAT)!]).toEqual([]);
    expect(calls).toEqual([`set ${CHAT} 2 true tx1`, `set ${CHAT} 5 true tx1`, `set ${CHAT} 2 false tx1`, 'drop 5 tx1']);
    expect(committed.map((e) => (e.payload as { action: string }).action)).toEqual(['assigned', 'assigned', 'unassigned', 'edited', 'deleted']);
  });

  it('remembers the channel of a post as one the account follows, before announcing the post', async () => {
    const steps: string[] = [];
    const post = { channelJid: '120363000000000012@newsletter', serverId: '3', text: 'hello', type: 'text', timestamp: 1 };
    await takeAccountExtrasEvent({ type: 'channel-message', post }, {
      sessionId: 'ses_1',
      records: { find: async () => null },
      publish: async (e) => void steps.push(`publish ${e.event}`),
      channels: { remember: async (c) => void steps.push(`remember ${JSON.stringify(c)}`) },
      logger: pino({ level: 'silent' }),
    });
    expect(steps).toEqual([`remember {"jid":"120363000000000012@newsletter"}`, 'publish channel.message']);
  });
});
