import { Injectable } from '@nestjs/common';
import { Db, type Queryable } from '../pg';

/** A chat of the session as Chatwoot holds it: its contact and the conversation in the integration's inbox. */
export interface ChatwootConversationRow {
  chatJid: string;
  contactId: number;
  conversationId: number;
  sourceId: string;
  /** the name the contact was given in Chatwoot (its number until a push name is known) */
  contactName: string;
}

/** One WhatsApp message (or mark on one) and the Chatwoot message that shows it. */
export interface ChatwootMessageLink {
  /** the WhatsApp message id for a message; `<event id>` for a mark (edit, delete, reaction, failure note) */
  linkKey: string;
  waMessageId: string | null;
  messageId: string | null;
  chatwootMessageId: number;
  conversationId: number;
}

export interface ChatwootIntegrationState {
  webhookId: string;
  inboundSecretEncrypted: string;
  importState: 'none' | 'pending' | 'importing' | 'imported';
  importedMessages: number;
  lastError: string | null;
  /** the inbox the dispatcher created (connected without `inboxId`); null until then */
  inboxId: number | null;
}

/** What creating the integration's inbox needs (connected without `inboxId`), and its id once created. */
export interface ChatwootInboxRequest {
  inboxId: number | null;
  name: string | null;
  webhookUrlEncrypted: string | null;
}

/**
 * The Chatwoot integration's own tables (migration 1795870000000): its inbound secret and import state, the
 * conversation of each chat, the message links. The integration itself is a `chatwoot` row of the webhooks table
 * (WebhooksRepository).
 */
@Injectable()
export class ChatwootRepository {
  constructor(private readonly db: Db) {}

  async saveState(webhookId: string, inboundSecretEncrypted: string, importState: ChatwootIntegrationState['importState'], manager: Queryable = this.db): Promise<void> {
    await manager.query(
      `INSERT INTO chatwoot_integrations (webhook_id, inbound_secret_encrypted, import_state) VALUES ($1, $2, $3)
       ON CONFLICT (webhook_id) DO UPDATE SET import_state = CASE WHEN chatwoot_integrations.import_state = 'none' THEN EXCLUDED.import_state ELSE chatwoot_integrations.import_state END`,
      [webhookId, inboundSecretEncrypted, importState],
    );
  }

  async stateOf(webhookId: string): Promise<ChatwootIntegrationState | null> {
    const rows: Array<{ webhook_id: string; inbound_secret_encrypted: string; import_state: ChatwootIntegrationState['importState']; imported_messages: number; last_error: string | null; inbox_id: string | null }> =
      await this.db.query(`SELECT webhook_id, inbound_secret_encrypted, import_state, imported_messages, last_error, inbox_id FROM chatwoot_integrations WHERE webhook_id = $1`, [webhookId]);
    const r = rows[0];
    return r
      ? { webhookId: r.webhook_id, inboundSecretEncrypted: r.inbound_secret_encrypted, importState: r.import_state, importedMessages: r.imported_messages, lastError: r.last_error, inboxId: r.inbox_id === null ? null : Number(r.inbox_id) }
      : null;
  }

  /**
   * What the dispatcher needs to create the integration's inbox (written by the API at each connect or update);
   * `forgetInbox`: the account changed, so an inbox created in the former one is not this one's.
   */
  async saveInboxRequest(webhookId: string, name: string, webhookUrlEncrypted: string, forgetInbox: boolean, manager: Queryable = this.db): Promise<void> {
    await manager.query(
      `UPDATE chatwoot_integrations SET inbox_name = $2, inbox_webhook_url_encrypted = $3, inbox_id = CASE WHEN $4 THEN NULL ELSE inbox_id END WHERE webhook_id = $1`,
      [webhookId, name, webhookUrlEncrypted, forgetInbox],
    );
  }

  async inboxRequestOf(webhookId: string): Promise<ChatwootInboxRequest | null> {
    const rows: Array<{ inbox_id: string | null; inbox_name: string | null; inbox_webhook_url_encrypted: string | null }> =
      await this.db.query(`SELECT inbox_id, inbox_name, inbox_webhook_url_encrypted FROM chatwoot_integrations WHERE webhook_id = $1`, [webhookId]);
    const r = rows[0];
    return r ? { inboxId: r.inbox_id === null ? null : Number(r.inbox_id), name: r.inbox_name, webhookUrlEncrypted: r.inbox_webhook_url_encrypted } : null;
  }

  /** The created inbox's id; the first stored wins (two dispatchers creating at once), and it is returned. */
  async saveInbox(webhookId: string, inboxId: number): Promise<number> {
    const rows = await this.db.query<{ inbox_id: string }>(
      `UPDATE chatwoot_integrations SET inbox_id = COALESCE(inbox_id, $2) WHERE webhook_id = $1 RETURNING inbox_id`,
      [webhookId, inboxId],
    );
    if (!rows[0]) throw new Error(`the Chatwoot integration ${webhookId} is gone`);
    return Number(rows[0].inbox_id);
  }

  /**
   * Claims an import (one claimer wins): a pending one, or one whose holder stopped beating `staleSeconds` ago (a
   * killed dispatcher); false when another holds it or there is none.
   */
  async claimImport(webhookId: string, staleSeconds: number): Promise<boolean> {
    const n = await this.db.affected(
      `UPDATE chatwoot_integrations SET import_state = 'importing', import_beat = now()
        WHERE webhook_id = $1 AND (import_state = 'pending' OR (import_state = 'importing' AND import_beat < now() - make_interval(secs => $2)))`,
      [webhookId, staleSeconds],
    );
    return n > 0;
  }

  /** Integrations whose import is still to do (pending, or left half-way by a killed process). */
  async importsToDo(): Promise<string[]> {
    const rows = await this.db.query<{ webhook_id: string }>(`SELECT webhook_id FROM chatwoot_integrations WHERE import_state IN ('pending', 'importing')`);
    return rows.map((r) => r.webhook_id);
  }

  async recordImported(webhookId: string, count: number, done: boolean): Promise<void> {
    await this.db.query(
      `UPDATE chatwoot_integrations SET imported_messages = imported_messages + $2, import_beat = now(),
              import_state = CASE WHEN $3 THEN 'imported' ELSE import_state END WHERE webhook_id = $1`,
      [webhookId, count, done],
    );
  }

  async recordError(webhookId: string, error: string | null): Promise<void> {
    await this.db.query(`UPDATE chatwoot_integrations SET last_error = $2 WHERE webhook_id = $1 AND last_error IS DISTINCT FROM $2`, [webhookId, error]);
  }

  async conversationOf(integrationId: string, chatJid: string): Promise<ChatwootConversationRow | null> {
    const rows = await this.db.query<{ chat_jid: string; contact_id: string; conversation_id: string; source_id: string; contact_name: string }>(
      `SELECT chat_jid, contact_id, conversation_id, source_id, contact_name FROM chatwoot_conversations WHERE integration_id = $1 AND chat_jid = $2`,
      [integrationId, chatJid],
    );
    const r = rows[0];
    return r ? { chatJid: r.chat_jid, contactId: Number(r.contact_id), conversationId: Number(r.conversation_id), sourceId: r.source_id, contactName: r.contact_name } : null;
  }

  /** The chat a Chatwoot conversation belongs to (an agent's reply goes there). */
  async chatOfConversation(integrationId: string, conversationId: number): Promise<string | null> {
    const rows = await this.db.query<{ chat_jid: string }>(
      `SELECT chat_jid FROM chatwoot_conversations WHERE integration_id = $1 AND conversation_id = $2`,
      [integrationId, conversationId],
    );
    return rows[0]?.chat_jid ?? null;
  }

  /** First writer wins: a concurrent creation (another dispatcher) keeps the stored conversation, which is returned. */
  async saveConversation(integrationId: string, row: ChatwootConversationRow): Promise<ChatwootConversationRow> {
    await this.db.query(
      `INSERT INTO chatwoot_conversations (integration_id, chat_jid, contact_id, conversation_id, source_id, contact_name) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (integration_id, chat_jid) DO NOTHING`,
      [integrationId, row.chatJid, row.contactId, row.conversationId, row.sourceId, row.contactName],
    );
    return (await this.conversationOf(integrationId, row.chatJid)) ?? row;
  }

  async renameContact(integrationId: string, chatJid: string, name: string): Promise<void> {
    await this.db.query(`UPDATE chatwoot_conversations SET contact_name = $3 WHERE integration_id = $1 AND chat_jid = $2`, [integrationId, chatJid, name]);
  }

  /** A conversation Chatwoot no longer has (deleted by an agent): the next message opens a new one. */
  async forgetConversation(integrationId: string, chatJid: string): Promise<void> {
    await this.db.query(`DELETE FROM chatwoot_conversations WHERE integration_id = $1 AND chat_jid = $2`, [integrationId, chatJid]);
  }

  async link(integrationId: string, linkKey: string): Promise<ChatwootMessageLink | null> {
    const rows = await this.db.query<LinkColumns>(`${SELECT_LINK} WHERE integration_id = $1 AND link_key = $2`, [integrationId, linkKey]);
    return rows[0] ? toLink(rows[0]) : null;
  }

  /** The Chatwoot message showing a WhatsApp message (the message itself, not a mark on it). */
  async linkOfWa(integrationId: string, waMessageId: string): Promise<ChatwootMessageLink | null> {
    const rows = await this.db.query<LinkColumns>(`${SELECT_LINK} WHERE integration_id = $1 AND wa_message_id = $2 ORDER BY created_at LIMIT 1`, [integrationId, waMessageId]);
    return rows[0] ? toLink(rows[0]) : null;
  }

  async linkOfMessage(integrationId: string, messageId: string): Promise<ChatwootMessageLink | null> {
    const rows = await this.db.query<LinkColumns>(`${SELECT_LINK} WHERE integration_id = $1 AND message_id = $2 ORDER BY created_at LIMIT 1`, [integrationId, messageId]);
    return rows[0] ? toLink(rows[0]) : null;
  }

  /** The WhatsApp message a Chatwoot message shows (an agent's reply quotes it). */
  async linkOfChatwoot(integrationId: string, chatwootMessageId: number): Promise<ChatwootMessageLink | null> {
    const rows = await this.db.query<LinkColumns>(
      `${SELECT_LINK} WHERE integration_id = $1 AND chatwoot_message_id = $2 AND message_id IS NOT NULL ORDER BY created_at LIMIT 1`,
      [integrationId, chatwootMessageId],
    );
    return rows[0] ? toLink(rows[0]) : null;
  }

  /** Idempotent: a link already stored under the key is kept. */
  async saveLink(integrationId: string, link: ChatwootMessageLink): Promise<void> {
    await this.db.query(
      `INSERT INTO chatwoot_message_links (integration_id, link_key, wa_message_id, message_id, chatwoot_message_id, conversation_id)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (integration_id, link_key) DO NOTHING`,
      [integrationId, link.linkKey, link.waMessageId, link.messageId, link.chatwootMessageId, link.conversationId],
    );
  }
}

interface LinkColumns {
  link_key: string;
  wa_message_id: string | null;
  message_id: string | null;
  chatwoot_message_id: string;
  conversation_id: string;
}

const SELECT_LINK = `SELECT link_key, wa_message_id, message_id, chatwoot_message_id, conversation_id FROM chatwoot_message_links`;

const toLink = (r: LinkColumns): ChatwootMessageLink => ({
  linkKey: r.link_key,
  waMessageId: r.wa_message_id,
  messageId: r.message_id,
  chatwootMessageId: Number(r.chatwoot_message_id),
  conversationId: Number(r.conversation_id),
});
