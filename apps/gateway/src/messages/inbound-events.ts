import type { Logger } from 'pino';
import type { CatalogEvent } from '@app/contracts';
import { newId, toMessageView } from '@app/database';
import type { EngineConnection, EngineEvent, FollowedChannelBook, InboundMessage } from '../engine/engine.interface';
import type { SessionEventSink, SessionRecords } from '../store-ports';
import { inboundMessageRow } from './inbound-row';
import { isGroupJid, MessageRow, MessageStore } from './message-store';
import type { OutboundSender } from './outbound-sender';
import type { ContactBook } from '../contacts/contact-book';
import { ACCOUNT_EXTRAS_EVENT_TYPES, type AccountExtrasEngineEvent } from '../engine/account-extras-events';
import { type AccountExtrasEventsDeps, type ChatLabelStore, takeAccountExtrasEvent } from './account-extras-events';

export type InboundEngineEvent = Extract<
  EngineEvent,
  { type: 'message' | 'edit' | 'revoke' | 'receipt' | 'reaction' | 'poll-vote' | 'presence' | 'call' | 'group-update' | 'group-participants' | 'contacts' | 'blocklist' }
> | AccountExtrasEngineEvent;

const INBOUND_TYPES: ReadonlySet<string> = new Set<InboundEngineEvent['type']>([
  'message', 'edit', 'revoke', 'receipt', 'reaction', 'poll-vote', 'presence', 'call', 'group-update', 'group-participants',
  'contacts', 'blocklist',
  ...ACCOUNT_EXTRAS_EVENT_TYPES,
]);

/** push names remembered per session (most recent senders), to skip writing an unchanged one */
const PUSH_NAMES_KEPT = 1000;
/** a person's account (a number's or a LID's jid): what becomes a contact (not a group, a channel or a broadcast) */
const PERSON_JID = /^\d+@(s\.whatsapp\.net|lid)$/;

export const isInboundEvent = (e: EngineEvent): e is InboundEngineEvent => INBOUND_TYPES.has(e.type);

export interface InboundEventsDeps {
  sessionId: string;
  organizationId: string;
  store: MessageStore;
  records: SessionRecords;
  events: SessionEventSink;
  sender: Pick<OutboundSender, 'onReceipt' | 'onMemberReceipt'>;
  logger: Logger;
  clock?: () => number;
  /** the session's contacts (push names, contact updates, blocklist); absent in callers that keep none */
  contacts?: ContactBook;
  /** told of each inbound message once it is committed (eager media downloads); must not wait or throw */
  inboundStored?: (row: MessageRow) => void;
  /** the labels each chat carries, kept from the network's label associations (absent: only announced) */
  chatLabels?: ChatLabelStore;
  /** the followed channels the gateway keeps: a post's channel is remembered (absent: none kept) */
  channels?: Pick<FollowedChannelBook, 'remember'>;
}

/**
 * Turns what the network tells a session into the message log and events (CONTRACT 10). Every inbound message is
 * stored once (unique session + waMessageId): a re-delivery stores nothing and publishes nothing.
 */
export class InboundEvents {
  /** sender → the push name last stored for it, '' for none (insertion order = recency; bounded by PUSH_NAMES_KEPT) */
  private readonly pushNames = new Map<string, string>();
  private readonly clock: () => number;

  constructor(private readonly deps: InboundEventsDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  /** `conn` is the connection the event came from (read receipts go back on it). */
  async handle(event: InboundEngineEvent, conn: EngineConnection | null): Promise<void> {
    const { sessionId } = this.deps;
    switch (event.type) {
      case 'message':
        return this.message(event.message, conn);
      case 'edit':
        return this.edit(event);
      case 'revoke':
        return this.revoke(event);
      case 'receipt':
        if (event.participant && isGroupJid(event.chatJid)) return this.memberReceipt(event, event.participant);
        return this.deps.sender.onReceipt(event.waMessageId, event.status);
      case 'reaction':
        return this.reaction(event);
      case 'poll-vote':
        return this.pollVote(event);
      case 'presence':
        return this.publish({ event: 'presence.update', payload: { chatJid: event.chatJid, jid: event.jid, presence: event.presence } });
      case 'call':
        return this.call(event, conn);
      case 'group-update':
        await this.deps.records.updateGroup(sessionId, event.groupJid, event.changes, event.network);
        // a refresh that only brought the network form is no news to announce
        if (!Object.keys(event.changes).length) return;
        return this.publish({ event: 'group.update', payload: { groupJid: event.groupJid, changes: event.changes, actor: event.actor ?? null } });
      case 'group-participants': {
        const { records } = this.deps;
        if (event.action === 'add') await records.addGroupParticipants(sessionId, event.groupJid, event.participants, event.network);
        if (event.action === 'remove') await records.removeGroupParticipants(sessionId, event.groupJid, event.participants, event.network);
        if (event.action === 'promote' || event.action === 'demote') {
          await records.setGroupAdmins(sessionId, event.groupJid, event.participants, event.action === 'promote' ? 'admin' : null, event.network);
        }
        return this.publish({
          event: 'group.participants',
          payload: { groupJid: event.groupJid, action: event.action, participants: event.participants, actor: event.actor ?? null },
        });
      }
      case 'contacts':
        // what the network now says of these contacts replaces the remembered push names
        for (const c of event.contacts) this.pushNames.delete(c.jid);
        return this.deps.contacts?.learn(this.deps.organizationId, sessionId, event.contacts);
      case 'blocklist':
        return this.deps.contacts?.blocklist(this.deps.organizationId, sessionId, event.action, event.jids, this.deps.events);
      case 'label':
      case 'status':
      case 'channel-message':
        return takeAccountExtrasEvent(event, {
          sessionId,
          records: this.deps.records,
          publish: (named) => this.publish(named),
          chatLabels: this.chatLabels(),
          channels: this.deps.channels,
          logger: this.deps.logger,
        });
    }
  }

  /**
   * Messages the account sent from its phone (`fromMe`) are logged as `out`/`sent` without an event: they belong in
   * the conversation's log, but nobody asked the API to send them. Our own sends echoing back collide with their row
   * (same waMessageId) and store nothing.
   */
  private async message(m: InboundMessage, conn: EngineConnection | null): Promise<void> {
    const { store, sessionId, organizationId } = this.deps;
    const quotedMessageId = m.quotedWaMessageId ? ((await store.idsByWaIds(sessionId, [m.quotedWaMessageId])).get(m.quotedWaMessageId) ?? null) : null;
    // stored and announced together: a crash between the two would otherwise drop the event for good (the
    // network's re-delivery finds the row and publishes nothing)
    const row = await this.deps.events.transact(async (tx, publish) => {
      const stored = await store.insert(
        { ...inboundMessageRow(m, { organizationId, sessionId, id: newId('msg'), createdAt: this.clock(), sentAt: m.fromMe ? m.timestamp : null }), quotedMessageId },
        tx,
      );
      if (stored && !m.fromMe) publish({ event: 'message.received', organizationId, sessionId, payload: { message: toMessageView(stored) } });
      return stored;
    });
    // a sender is a contact from its first message (with or without a push name: the inbox names it by what the
    // contacts know), and its push name keeps that contact current; written only when it differs from what this
    // connection last stored, so a chatty contact costs one write, not one per message
    // (a business's verified name rides along: the third name a chat is shown by)
    const said = m.verifiedName ? `${m.pushName ?? ''}\u0000${m.verifiedName}` : (m.pushName ?? '');
    const stored = this.pushNames.get(m.from);
    if (!m.fromMe && PERSON_JID.test(m.from) && (stored === undefined || (said !== '' && stored !== said))) {
      const names = { ...(m.pushName ? { pushName: m.pushName } : {}), ...(m.verifiedName ? { verifiedName: m.verifiedName } : {}) };
      await this.deps.contacts?.learn(organizationId, sessionId, [{ jid: m.from, ...names }]);
      this.pushNames.delete(m.from);
      this.pushNames.set(m.from, said);
      if (this.pushNames.size > PUSH_NAMES_KEPT) this.pushNames.delete(this.pushNames.keys().next().value!);
    }
    if (!row || m.fromMe) return;
    this.deps.inboundStored?.(row);
    if (conn && (await this.deps.records.find(sessionId))?.autoRead) {
      const key = { waMessageId: m.id, chatJid: m.chatJid, fromMe: false, participant: isGroupJid(m.chatJid) ? m.from : null };
      await conn.markRead([key]).catch((err) => this.deps.logger.warn({ err: String(err) }, 'marking a message read failed'));
    }
  }

  /**
   * A group member's receipt. The members who must reach a step before the message does are the stored group's, minus
   * ourselves; a member the network names by LID is matched to the number the group keeps for it. A group not stored
   * here gives no members: the member's receipt is kept and announced, the message's own status waits.
   */
  private async memberReceipt(e: Extract<InboundEngineEvent, { type: 'receipt' }>, participant: string): Promise<void> {
    const { records, sessionId } = this.deps;
    const [group, session] = await Promise.all([records.findGroup(sessionId, e.chatJid), records.find(sessionId)]);
    const own = session?.phoneNumber ? `${session.phoneNumber}@s.whatsapp.net` : null;
    const known = group?.network?.participants.find((p) => p.lid === participant || p.id === participant);
    const member = known?.phoneNumber ?? (known && !known.id.endsWith('@lid') ? known.id : null) ?? participant;
    const members = (group?.participants ?? []).filter((jid) => jid !== own);
    return this.deps.sender.onMemberReceipt(e.waMessageId, e.status, member, members);
  }

  /**
   * An edit changes the stored row and announces it in one transaction (as an inbound message is stored). An edit of a
   * message we never stored (or a re-delivered one that changes nothing) stores and publishes nothing.
   */
  private async edit(e: Extract<InboundEngineEvent, { type: 'edit' }>): Promise<void> {
    const { store, sessionId, organizationId, logger } = this.deps;
    const edited = await this.deps.events.transact(async (tx, publish) => {
      const result = await store.applyEdit(sessionId, e.waMessageId, e.text, tx);
      if (result) publish({ event: 'message.edited', organizationId, sessionId, payload: { message: toMessageView(result.row), previousText: result.previousText } });
      return result;
    });
    if (!edited) logger.debug({ waMessageId: e.waMessageId, chatJid: e.chatJid }, 'edit of a message not in the log (or no change): ignored');
  }

  /** A delete for everyone marks the stored row and announces it in one transaction; an unknown message is ignored. */
  private async revoke(e: Extract<InboundEngineEvent, { type: 'revoke' }>): Promise<void> {
    const { store, sessionId, organizationId, logger } = this.deps;
    const revoked = await this.deps.events.transact(async (tx, publish) => {
      const row = await store.markRevoked(sessionId, e.waMessageId, tx);
      if (row) publish({ event: 'message.revoked', organizationId, sessionId, payload: { messageId: row.id, waMessageId: row.waMessageId, chatJid: e.chatJid, by: e.by } });
      return row;
    });
    if (!revoked) logger.debug({ waMessageId: e.waMessageId, chatJid: e.chatJid }, 'revoke of a message not in the log (or already revoked): ignored');
  }

  /**
   * A reaction is kept on the message it reacts to (what a conversation shows) and announced in one transaction. A
   * reaction to a message not in the log is still announced (`messageId` null), as before it was kept.
   */
  private async reaction(e: Extract<InboundEngineEvent, { type: 'reaction' }>): Promise<void> {
    const { store, sessionId, organizationId } = this.deps;
    await this.deps.events.transact(async (tx, publish) => {
      const row = await store.applyReaction(sessionId, e.waMessageId, e.from, e.emoji, tx);
      const messageId = row?.id ?? (await store.idsByWaIds(sessionId, [e.waMessageId])).get(e.waMessageId) ?? null;
      publish({ event: 'message.reaction', organizationId, sessionId, payload: { messageId, waMessageId: e.waMessageId, chatJid: e.chatJid, from: e.from, emoji: e.emoji } });
    });
  }

  /** A vote is kept on its poll (each voter's latest) and announced in one transaction. */
  private async pollVote(e: Extract<InboundEngineEvent, { type: 'poll-vote' }>): Promise<void> {
    const { store, sessionId, organizationId } = this.deps;
    await this.deps.events.transact(async (tx, publish) => {
      const row = await store.applyPollVote(sessionId, e.pollWaMessageId, e.voter, e.selectedOptions, tx);
      const pollMessageId = row?.id ?? (await store.idsByWaIds(sessionId, [e.pollWaMessageId])).get(e.pollWaMessageId) ?? null;
      publish({ event: 'poll.vote', organizationId, sessionId, payload: { pollMessageId, chatJid: e.chatJid, voter: e.voter, selectedOptions: e.selectedOptions } });
    });
  }

  /**
   * With the session's `rejectCalls` on, the call is rejected on the connection it rang on, then announced with
   * `rejected: true`. A rejection that fails (the call already ended, the socket closed) is logged and the call is
   * announced as not rejected: the event tells what happened.
   */
  private async call(e: Extract<InboundEngineEvent, { type: 'call' }>, conn: EngineConnection | null): Promise<void> {
    const { callId, from, isVideo, isGroup } = e;
    let rejected = false;
    if (conn && (await this.deps.records.find(this.deps.sessionId))?.rejectCalls) {
      try {
        await conn.perform('calls.reject', { callId, from });
        rejected = true;
      } catch (err) {
        this.deps.logger.warn({ err: String(err), callId }, 'rejecting an incoming call failed');
      }
    }
    return this.publish({ event: 'call.incoming', payload: { callId, from, isVideo, isGroup, rejected } });
  }

  private chatLabels(): AccountExtrasEventsDeps['chatLabels'] {
    const { chatLabels: store, organizationId, sessionId, events } = this.deps;
    if (!store) return undefined;
    return { organizationId, store, transact: (work) => events.transact((tx, publish) => work(tx, (named) => publish({ ...named, organizationId, sessionId }))) };
  }

  private publish(named: CatalogEvent): Promise<void> {
    return this.deps.events
      .publish({ ...named, organizationId: this.deps.organizationId, sessionId: this.deps.sessionId })
      .then(() => undefined);
  }
}
