import type { ContactFacts } from '@app/contracts';
import { type ContactsRepository, serviceSession, toContactView, type Tx } from '@app/database';
import type { SessionEventSink } from '../store-ports';

/**
 * The part of the `contacts` table (ContactsRepository) a gateway keeps current from what the network says: push
 * names on inbound messages, the engine's contact updates, and blocklist changes made on the phone.
 */
export interface ContactBook {
  /** stores what the network said of these contacts (a field it did not name keeps its stored value) */
  learn(organizationId: string, sessionId: string, facts: ContactFacts[]): Promise<void>;
  /**
   * the blocklist as the network told it: `set` (the whole list, stored without events) or a change, stored and
   * announced (`contact.blocked` / `contact.unblocked`) in one transaction
   */
  blocklist(organizationId: string, sessionId: string, action: 'set' | 'add' | 'remove', jids: string[], events: SessionEventSink): Promise<void>;
}

export class PgContactBook implements ContactBook {
  constructor(private readonly contacts: ContactsRepository) {}

  async learn(organizationId: string, sessionId: string, facts: ContactFacts[]): Promise<void> {
    await this.contacts.upsertMany(serviceSession(sessionId, organizationId), facts);
  }

  async blocklist(organizationId: string, sessionId: string, action: 'set' | 'add' | 'remove', jids: string[], events: SessionEventSink): Promise<void> {
    if (action === 'set') return this.contacts.replaceBlocklist(organizationId, sessionId, jids);
    const blocked = action === 'add';
    await events.transact(async (tx, publish) => {
      // our own block through the API comes back as this change too: only a change of the stored state is news
      const rows = await this.contacts.markBlocked(serviceSession(sessionId, organizationId), jids.map((jid) => ({ jid, blocked })), tx as Tx);
      for (const { row, changed } of rows) {
        if (!changed) continue;
        publish({ event: blocked ? 'contact.blocked' : 'contact.unblocked', organizationId, sessionId, payload: { contact: toContactView(row) } });
      }
    });
  }
}
