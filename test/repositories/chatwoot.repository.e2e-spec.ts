import type { DataSource } from 'typeorm';
import { RETRY_POLICY_DEFAULTS } from '@app/contracts';
import { ChatwootRepository, newId, WebhooksRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession, ownedSession } from './rows';

describe('ChatwootRepository (PostgreSQL)', () => {
  let db: DataSource;
  let chatwoot: ChatwootRepository;
  let webhooks: WebhooksRepository;
  let integrationId: string;
  let organizationId: string;
  let sessionId: string;

  const newIntegration = async (session: string) => {
    const now = new Date();
    const row = await webhooks.save({
      id: newId('cwt'), organizationId, kind: 'chatwoot', url: 'https://chatwoot.example.test', target: { chatwoot: { accountId: 1, inboxId: 2, groups: false, signMessages: false, importDays: 3 } },
      events: ['message.received'], sessionId: session, active: true, customHeaders: {}, retryPolicy: RETRY_POLICY_DEFAULTS, rateLimitPerSecond: null,
      failingSince: null, disabledAt: null, disabledReason: null, secretEncrypted: 'sealed', createdAt: now, updatedAt: now,
    });
    await chatwoot.saveState(row.id, 'sealed-secret', 'pending');
    return row.id;
  };

  beforeAll(async () => {
    db = await testDataSource();
    chatwoot = new ChatwootRepository(await testDb());
    webhooks = new WebhooksRepository(await testDb());
    organizationId = await newOrganization(db);
    sessionId = (await newSession(db, organizationId)).id;
    integrationId = await newIntegration(sessionId);
  });

  afterAll(() => closeTestDataSource());

  it('keeps one integration per session and finds it only in its family', async () => {
    await expect(newIntegration(sessionId)).rejects.toThrow(/webhooks_one_chatwoot_per_session/);
    expect((await webhooks.chatwootOfSession(await ownedSession(organizationId, sessionId)))?.id).toBe(integrationId);
    expect(await webhooks.findInOrganization(organizationId, integrationId, 'sink')).toBeNull();
    expect(await webhooks.findInOrganization(organizationId, integrationId, 'webhook')).toBeNull();
  });

  it('gives an import to one claimer, and to another only once the holder stopped beating', async () => {
    const claims = await Promise.all([chatwoot.claimImport(integrationId, 60), chatwoot.claimImport(integrationId, 60)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await chatwoot.claimImport(integrationId, 60)).toBe(false);
    await db.query(`UPDATE chatwoot_integrations SET import_beat = now() - interval '2 minutes' WHERE webhook_id = $1`, [integrationId]);
    expect(await chatwoot.claimImport(integrationId, 60)).toBe(true);
    await chatwoot.recordImported(integrationId, 7, true);
    expect(await chatwoot.stateOf(integrationId)).toMatchObject({ importState: 'imported', importedMessages: 7 });
    expect(await chatwoot.importsToDo()).not.toContain(integrationId);
  });

  it('keeps the first conversation stored for a chat, and a link once under its key', async () => {
    const chat = '15550001111@s.whatsapp.net';
    const first = await chatwoot.saveConversation(integrationId, { chatJid: chat, contactId: 1, conversationId: 10, sourceId: 's1', contactName: '+15550001111' });
    const second = await chatwoot.saveConversation(integrationId, { chatJid: chat, contactId: 2, conversationId: 20, sourceId: 's2', contactName: 'x' });
    expect([first.conversationId, second.conversationId]).toEqual([10, 10]);
    expect(await chatwoot.chatOfConversation(integrationId, 10)).toBe(chat);
    const link = { linkKey: 'WA1', waMessageId: 'WA1', messageId: 'msg_1', chatwootMessageId: 100, conversationId: 10 };
    await chatwoot.saveLink(integrationId, link);
    await chatwoot.saveLink(integrationId, { ...link, chatwootMessageId: 101 });
    expect(await chatwoot.linkOfWa(integrationId, 'WA1')).toEqual(link);
    expect(await chatwoot.linkOfChatwoot(integrationId, 100)).toEqual(link);
    expect(await db.query('SELECT count(*)::int AS n FROM chatwoot_message_links WHERE integration_id = $1', [integrationId])).toEqual([{ n: 1 }]);
  });
});
