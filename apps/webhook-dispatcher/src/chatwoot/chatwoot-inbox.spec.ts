import type { MessageView } from '@app/contracts';
import type { ChatwootInboxRequest } from '@app/database';
import type { ChatwootClient, ChatwootInbox } from './chatwoot-client';
import { ChatwootDestination, type ChatwootStores } from './chatwoot-destination';

/** A Chatwoot of one account whose inbox calls are counted; the rest answers what a message needs. */
function fakes(existing: ChatwootInbox[] = []) {
  const inboxes = [...existing];
  let ids = 500;
  const calls = { list: 0, create: 0 };
  const client = {
    inboxes: async () => (calls.list++, [...inboxes]),
    createApiInbox: async (_a: unknown, name: string, webhookUrl: string) => {
      calls.create++;
      // Chatwoot answers after a while: concurrent deliveries overlap the creation
      await new Promise((r) => setImmediate(r));
      const inbox = { id: ++ids, name, channel_type: 'Channel::Api', webhook_url: webhookUrl };
      inboxes.push(inbox);
      return inbox;
    },
    searchContacts: async () => [],
    createContact: async (_a: unknown, c: { inbox_id: number }) => ({ contact: { id: ++ids, name: 'x', phone_number: null, identifier: null }, sourceId: `src-${c.inbox_id}` }),
    createConversation: async (_a: unknown, c: { inbox_id: number }) => (conversationsIn.push(c.inbox_id), ++ids),
    createMessage: async () => ++ids,
  } as unknown as ChatwootClient;
  const conversationsIn: number[] = [];
  const request: ChatwootInboxRequest = { inboxId: null, name: 'WhatsApp sales', webhookUrlEncrypted: 'enc:https://gw.example/api/v1/integrations/chatwoot/cwt_1/webhook?secret=s' };
  const stores = {
    chatwoot: {
      inboxRequestOf: async () => ({ ...request }),
      saveInbox: async (_id: string, inboxId: number) => (request.inboxId ??= inboxId),
      linkOfWa: async () => null,
      conversationOf: async () => null,
      saveConversation: async (_id: string, row: unknown) => row,
      saveLink: async () => undefined,
    },
    contacts: { find: async () => null },
    decrypt: (e: string) => e.replace(/^enc:/, ''),
  } as unknown as ChatwootStores;
  return { destination: new ChatwootDestination(client, stores), calls, conversationsIn, request, inboxes };
}

const account = { baseUrl: 'https://chatwoot.example', accountId: 1, token: 't' };
const settings = { accountId: 1, inboxId: null, groups: false, signMessages: false, importDays: 0 };
const message = (n: number): MessageView =>
  ({ id: `msg_${n}`, waMessageId: `WA${n}`, chatJid: `1555000000${n}@s.whatsapp.net`, from: `1555000000${n}@s.whatsapp.net`, direction: 'in', type: 'text', text: 'hi', media: null, quotedMessageId: null, organizationId: 'org', sessionId: 'ses', createdAt: 0 }) as unknown as MessageView;

describe('ChatwootDestination: the inbox of an integration connected without inboxId', () => {
  it('creates one inbox for concurrent first messages of several chats, and uses it for each', async () => {
    const f = fakes();
    await Promise.all([1, 2, 3].map((n) => f.destination.mirror({ integrationId: 'cwt_1', account, settings }, message(n), 'live')));
    expect(f.calls.create).toBe(1);
    expect(f.inboxes).toEqual([expect.objectContaining({ name: 'WhatsApp sales', webhook_url: 'https://gw.example/api/v1/integrations/chatwoot/cwt_1/webhook?secret=s' })]);
    expect(f.conversationsIn).toEqual([f.inboxes[0].id, f.inboxes[0].id, f.inboxes[0].id]);
    expect(f.request.inboxId).toBe(f.inboxes[0].id);
  });

  it('takes an inbox of the account whose webhook is ours (created before a crash) instead of creating one', async () => {
    const f = fakes([{ id: 42, name: 'WhatsApp sales', channel_type: 'Channel::Api', webhook_url: 'https://gw.example/api/v1/integrations/chatwoot/cwt_1/webhook?secret=s' }]);
    await f.destination.mirror({ integrationId: 'cwt_1', account, settings }, message(1), 'live');
    expect(f.calls.create).toBe(0);
    expect(f.request.inboxId).toBe(42);
    expect(f.conversationsIn).toEqual([42]);
  });

  it('uses the inbox given at connect without asking Chatwoot', async () => {
    const f = fakes();
    await f.destination.mirror({ integrationId: 'cwt_1', account, settings: { ...settings, inboxId: 7 } }, message(1), 'live');
    expect(f.calls).toEqual({ list: 0, create: 0 });
    expect(f.conversationsIn).toEqual([7]);
  });
});
