import pino from 'pino';
import type { ContactFacts } from '@app/contracts';
import { MemoryMessageStore } from '../../../../test/fakes/memory-message-store';
import { recordingEventSink } from '../../../../test/fakes/recording-event-sink';
import { InboundEvents } from '../messages/inbound-events';
import { OutboundSender } from '../messages/outbound-sender';
import type { SessionRecords } from '../store-ports';
import type { ContactBook } from './contact-book';

const ALICE = '15550001111@s.whatsapp.net';

/** What the gateway hands its ContactBook, recorded. */
function setup() {
  const store = new MemoryMessageStore();
  const { sink } = recordingEventSink();
  const logger = pino({ level: 'silent' });
  const learned: ContactFacts[][] = [];
  const blocklists: Array<{ action: string; jids: string[] }> = [];
  const contacts: ContactBook = {
    learn: async (organizationId, sessionId, facts) => {
      expect({ organizationId, sessionId }).toEqual({ organizationId: 'org_1', sessionId: 'ses_1' });
      learned.push(facts);
    },
    blocklist: async (_o, _s, action, jids) => void blocklists.push({ action, jids }),
  };
  const sender = new OutboundSender({
    sessionId: 'ses_1', organizationId: 'org_1', store, events: sink, logger, live: () => null, sleep: async () => undefined,
    settings: { ttlMs: 60_000, typingMsPerChar: 0, typingMinMs: 0, typingMaxMs: 0 },
  });
  const records = { find: async () => ({ id: 'ses_1', autoRead: false }) } as unknown as SessionRecords;
  const inbound = new InboundEvents({ sessionId: 'ses_1', organizationId: 'org_1', store, records, events: sink, sender, logger, contacts });
  const message = (id: string, over: { pushName?: string; fromMe?: boolean } = {}) =>
    inbound.handle({ type: 'message', message: { id, from: ALICE, chatJid: ALICE, text: 'hi', timestamp: 1, fromMe: false, ...over } }, null);
  return { inbound, learned, blocklists, message };
}

describe('the gateway keeps contacts current from engine events', () => {
  it('an inbound message’s push name is learnt for its sender; our own messages and nameless ones teach nothing', async () => {
    const { learned, message } = setup();
    await message('A1', { pushName: 'Alice' });
    await message('A2');
    await message('A3', { pushName: 'Me', fromMe: true });
    expect(learned).toEqual([[{ jid: ALICE, pushName: 'Alice' }]]);
  });

  it('a sender without a push name becomes a contact at its first message, and its name is learnt when it comes', async () => {
    const { learned, message } = setup();
    await message('B1');
    await message('B2');
    await message('B3', { pushName: 'Alice' });
    expect(learned).toEqual([[{ jid: ALICE }], [{ jid: ALICE, pushName: 'Alice' }]]);
  });

  it('contact updates are learnt as they come; blocklist events go to the book with their action', async () => {
    const { inbound, learned, blocklists } = setup();
    await inbound.handle({ type: 'contacts', contacts: [{ jid: ALICE, name: 'Alice (book)' }] }, null);
    await inbound.handle({ type: 'blocklist', action: 'add', jids: [ALICE] }, null);
    await inbound.handle({ type: 'blocklist', action: 'set', jids: [] }, null);
    expect(learned).toEqual([[{ jid: ALICE, name: 'Alice (book)' }]]);
    expect(blocklists).toEqual([{ action: 'add', jids: [ALICE] }, { action: 'set', jids: [] }]);
  });
});
