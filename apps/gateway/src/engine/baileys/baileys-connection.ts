import type { Logger } from 'pino';
import type {
  AuthenticationCreds,
  BaileysEventMap,
  ConnectionState,
  GroupMetadata,
  proto,
  WAMessage,
  WAMessageKey,
  WASocket,
} from '@whiskeysockets/baileys';
import { DomainError, type SyncHistoryMode, type MessageKeyRef, type OutboundMessage, type SentMessage, type SessionActionArgs, type SessionActionName, type SessionActionResult } from '@app/contracts';
import { BAILEYS_ACTIONS, watchCalls, type BaileysActionContext } from './actions';
import { blocklistEventFrom, contactsEventFrom } from './actions/contacts';
import { watchAccountExtras } from './account-extras-watch';
import type { EventSpool } from '@app/messaging';
import type {
  AuthStateStore,
  CloseReason,
  EngineConnection,
  EngineEvent,
  EngineEventSink,
  EngineLookups,
  FollowedChannelBook,
  GroupInfo,
} from '../engine.interface';
import { type BaileysRuntime } from './baileys-runtime';
import {
  accountFrom,
  callFrom,
  closeCauseOf,
  closeReasonFor,
  epochMs,
  groupInfoFrom,
  groupParticipantsFrom,
  groupUpdateFrom,
  inboundMessageFrom,
  protocolEventFrom,
  presencesFrom,
  reactionFrom,
  reactionsFoldedInto,
  receiptFromUpdate,
  receiptsFoldedInto,
  receiptsFromUserReceipt,
  toLid,
  toUserJid,
  unwrapContent,
} from './baileys-mapping';
import { ChatAddressing, chatNamedIn, lidsNamedIn, numbersFor, withNumbers } from './baileys-identity';
import { chatUpdatesFrom, historyBatchesFrom } from './baileys-chats';
import { outboundFor, storedOriginalFor, messageKeyFor, sendOptionsFor } from './baileys-outbound';
import { describe, EngineConnectionClosedError } from './connection-errors';
import { HeldReceipts, type HeldReceiptsMetrics } from './held-receipts';
import { InboundHandover } from './inbound-handover';
import { PollVotes } from './poll-votes';
import { PushNameEchoes } from './push-name-echoes';

// One Baileys socket of a session as an `EngineConnection` (BaileysEngine.connect builds it): its phases, sends and
// actions, Baileys' events mapped and handed to the runner through the inbound spool (InboundHandover, with the poll
// votes decrypted by PollVotes), and its close.

export interface ConnectionDeps {
  sessionId: string;
  sock: WASocket;
  creds: AuthenticationCreds;
  auth: AuthStateStore;
  onEvent: EngineEventSink;
  logger: Logger;
  connectTimeoutMs: number;
  runtime: BaileysRuntime;
  lookups: EngineLookups | null;
  channels: FollowedChannelBook | null;
  spool: EventSpool | null;
  spoolRetryMs: number;
  /** the engine's set of spool entries in the gateway's hands, shared by all its connections */
  inFlight: Set<string>;
  onClosed: (reason: CloseReason) => void;
  /** counts the delivery receipts held until their messages are durable (held-receipts.ts) */
  receiptMetrics?: HeldReceiptsMetrics;
  /** the session setting: history batches are passed on unless `none` */
  syncHistory?: SyncHistoryMode;
}

type Phase = 'connecting' | 'awaiting_pairing' | 'open' | 'closed';

export class BaileysConnection implements EngineConnection {
  private phase: Phase = 'connecting';
  private closeRequested = false;
  /** creds writes run one after another, so an older snapshot never overwrites a newer one */
  private credsSaved: Promise<void> = Promise.resolve();
  private readonly closed: Promise<void>;
  private markClosed!: () => void;
  private readonly phaseWaiters = new Set<() => void>();
  /** how WhatsApp addresses each chat on this connection (LID or number): what we send back uses that form */
  private readonly addressing = new ChatAddressing();
  /** push names the messages already told: Baileys' contacts.update echo of them is dropped */
  private readonly pushNameEchoes = new PushNameEchoes();
  /** chats whose presence this connection subscribed to (once per chat per connection, as WhatsApp Web does) */
  private readonly presenceSubscribed = new Set<string>();
  private readonly inbound: InboundHandover;
  private readonly pollVotes: PollVotes;
  private readonly receipts: HeldReceipts;

  constructor(private readonly deps: ConnectionDeps) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.inbound = new InboundHandover({
      ...deps,
      isOpen: () => this.isOpen(),
      isClosed: () => this.phase === 'closed',
      needsNumbers: (event) => this.needsNumbers(event),
      withNumbers: (event) => this.withNumbers(event),
    });
    this.receipts = new HeldReceipts({ logger: deps.logger, metrics: deps.receiptMetrics });
    const ownJid = () => this.ownJid();
    this.pollVotes = new PollVotes({ ...deps, ownJid, closed: () => this.phase === 'closed', emit: (event) => this.emitIf(event) });
    const { ev } = deps.sock;
    ev.on('connection.update', (update) => this.guard('connection.update', () => this.onConnectionUpdate(update)));
    ev.on('creds.update', (update) => this.guard('creds.update', () => this.onCredsUpdate(update)));
    ev.on('messages.upsert', (upsert) => this.guard('messages.upsert', () => this.onMessagesUpsert(upsert)));
    ev.on('messages.update', (updates) => this.guard('messages.update', () => this.onMessagesUpdate(updates)));
    ev.on('message-receipt.update', (receipts) =>
      this.guard('message-receipt.update', () => receipts.forEach((r) => receiptsFromUserReceipt(r).forEach((e) => this.emit(e)))),
    );
    ev.on('messages.reaction', (reactions) =>
      this.guard('messages.reaction', () => reactions.forEach((r) => this.emitIf(reactionFrom(r, this.ownJid())))),
    );
    ev.on('presence.update', (update) => this.guard('presence.update', () => presencesFrom(update).forEach((e) => this.emit(e))));
    ev.on('call', (calls) => this.guard('call', () => calls.forEach((c) => this.emitIf(callFrom(c)))));
    watchCalls(deps.sock);
    ev.on('groups.upsert', (groups) =>
      this.guard('groups.upsert', () => groups.forEach((g) => this.emit({ type: 'group', group: groupInfoFrom(g, this.ownJid()), action: 'created' }))),
    );
    ev.on('groups.update', (updates) => this.guard('groups.update', () => updates.forEach((u) => this.emitIf(groupUpdateFrom(u)))));
    ev.on('group-participants.update', (update) => this.guard('group-participants.update', () => this.emitIf(groupParticipantsFrom(update))));
    ev.on('contacts.upsert', (contacts) => this.guard('contacts.upsert', () => this.emitIf(contactsEventFrom(contacts))));
    ev.on('contacts.update', (updates) => this.guard('contacts.update', () => this.emitIf(contactsEventFrom(this.pushNameEchoes.news(updates)))));
    ev.on('blocklist.set', (set) => this.guard('blocklist.set', () => this.emit(blocklistEventFrom(set))));
    ev.on('blocklist.update', (update) => this.guard('blocklist.update', () => this.emit(blocklistEventFrom(update))));
    ev.on('chats.upsert', (chats) => this.guard('chats.upsert', () => this.emitChatUpdates(chatUpdatesFrom(chats))));
    ev.on('chats.update', (updates) => this.guard('chats.update', () => this.emitChatUpdates(chatUpdatesFrom(updates))));
    ev.on('messaging-history.set', (set) => this.guard('messaging-history.set', () => this.onHistory(set)));
    watchAccountExtras(deps.sock, { emit: (e) => this.emit(e), guard: (what, run) => this.guard(what, run) });
  }

  private emitChatUpdates(chats: ReturnType<typeof chatUpdatesFrom>): void {
    if (chats.length) this.emit({ type: 'chat-update', chats });
  }

  /** History WhatsApp sent on pairing, in bounded batches, each spooled and handed over like any inbound event. */
  private onHistory(set: BaileysEventMap['messaging-history.set']): void {
    if ((this.deps.syncHistory ?? 'none') === 'none') return;
    const encode = (content: proto.IMessage) => this.deps.runtime.encodeMessage(content);
    for (const batch of historyBatchesFrom(set, this.ownJid(), encode)) this.emit(batch);
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    const digits = phoneNumber.replace(/\D/g, '');
    if (digits.length < 6 || digits.length > 15) throw new Error('a pairing code needs a phone number of 6 to 15 digits');
    if (this.deps.creds.registered) throw new Error(`session ${this.deps.sessionId} is already paired`);
    // WhatsApp accepts the code request only once the handshake is done and it is waiting for a pairing
    await this.waitForPhase(['awaiting_pairing'], 'request a pairing code');
    return this.call('request a pairing code', () => this.deps.sock.requestPairingCode(digits));
  }

  /** One operation of SessionActionMap, through its handler in actions/ (Baileys' own socket functions). */
  async perform<A extends SessionActionName>(action: A, args: SessionActionArgs<A>): Promise<SessionActionResult<A>> {
    const label = `perform ${action}`;
    this.assertOpen(label);
    const handler = BAILEYS_ACTIONS[action] as (ctx: BaileysActionContext, args: SessionActionArgs<A>) => Promise<SessionActionResult<A>> | SessionActionResult<A>;
    if (!handler) throw new DomainError('validation_error', `unknown session action ${String(action)}`, { action });
    try {
      return await handler(this.actionContext(), args);
    } catch (err) {
      // a refusal the handler put in the API's words stands; anything else is Baileys' error, made readable
      if (err instanceof DomainError) throw err;
      if (this.phase === 'closed') throw new EngineConnectionClosedError(this.deps.sessionId, label);
      throw new Error(`cannot ${label}: ${describe(err)}`, { cause: err });
    }
  }

  private actionContext(): BaileysActionContext {
    return {
      sessionId: this.deps.sessionId,
      sock: this.deps.sock,
      ownJid: () => this.ownJid(),
      runtime: this.deps.runtime,
      lookups: this.deps.lookups,
      channels: this.deps.channels,
      emit: (event) => this.emit(event),
      logger: this.deps.logger,
    };
  }

  async createGroup(subject: string, participants: string[]): Promise<GroupInfo> {
    this.assertOpen('create a group');
    const meta = await this.call('create a group', () => this.deps.sock.groupCreate(subject, participants));
    return groupInfoFrom(meta, this.ownJid());
  }

  /**
   * Baileys asked for a group we hold no network form of (a row from before it was kept, a group never stored): the
   * group as the network gives it, reported for storing. Undefined when it cannot be had (not open, not a group, the
   * query failed): Baileys then queries the network itself and fails the send with its own error if that fails too.
   */
  async fetchGroupForSend(jid: string): Promise<GroupMetadata | undefined> {
    if (!this.isOpen() || !jid.endsWith('@g.us')) return undefined;
    try {
      const meta = await this.deps.sock.groupMetadata(jid);
      // the query is async: nothing is reported after a close
      if (this.isOpen()) this.emit({ type: 'group-metadata', group: groupInfoFrom(meta, this.ownJid()) });
      return meta;
    } catch (err) {
      this.deps.logger.warn({ err: describe(err), groupJid: jid }, 'fetching group metadata for a send failed');
      return undefined;
    }
  }

  async send(original: OutboundMessage): Promise<SentMessage> {
    this.assertOpen('send a message');
    // recipient, quote and reaction target in the form the chat uses (its LID when WhatsApp addresses it by LID)
    const message = this.addressing.outbound(original);
    if (isPersonJid(message.to)) this.subscribeLater(message.to);
    const stored = await storedOriginalFor(message.content, this.deps.lookups);
    const prepared = outboundFor(message, { ownJid: this.ownJid(), stored, decode: (bytes) => this.deps.runtime.decodeMessage(bytes) });
    if ('relay' in prepared) {
      // a poll vote is a message Baileys cannot build: relayed as we encrypted it, with the fixed id
      await this.call('send a message', () => this.deps.sock.relayMessage(message.to, prepared.relay, { messageId: message.waMessageId }));
      return { waMessageId: message.waMessageId, timestamp: Date.now(), raw: this.deps.runtime.encodeMessage(prepared.relay) };
    }
    const content = prepared.content;
    const { options, quoteDropped } = sendOptionsFor(message, (bytes) => this.deps.runtime.decodeMessage(bytes));
    if (quoteDropped) {
      this.deps.logger.warn({ waMessageId: message.waMessageId, quoted: message.quoted?.waMessageId }, 'quoted message has no stored content; sending it unquoted');
    }
    const sent = await this.call('send a message', () => this.deps.sock.sendMessage(message.to, content, options));
    if (!sent?.key?.id) throw new Error('WhatsApp returned no message id for the sent message');
    return {
      waMessageId: sent.key.id,
      timestamp: epochMs(sent.messageTimestamp),
      raw: sent.message ? this.deps.runtime.encodeMessage(sent.message) : null,
    };
  }

  async sendPresence(chatJid: string, presence: 'composing' | 'paused'): Promise<void> {
    this.assertOpen('send a presence');
    const to = this.addressing.chat(chatJid);
    // WhatsApp Web subscribes to a chat's presence before it shows "typing…" there: once per chat per connection
    if (presence === 'composing') await this.call('subscribe to a presence', () => this.subscribePresence(to));
    await this.call('send a presence', () => this.deps.sock.sendPresenceUpdate(presence, to));
  }

  async markRead(keys: MessageKeyRef[]): Promise<void> {
    this.assertOpen('mark messages read');
    if (!keys.length) return;
    await this.call('mark messages read', () => this.deps.sock.readMessages(keys.map((key) => messageKeyFor(this.addressing.key(key)))));
  }

  /** `presenceSubscribe` once per chat on this connection; a failed one may be tried again. */
  private async subscribePresence(jid: string): Promise<void> {
    if (this.presenceSubscribed.has(jid)) return;
    this.presenceSubscribed.add(jid);
    try {
      await this.deps.sock.presenceSubscribe(jid);
    } catch (err) {
      this.presenceSubscribed.delete(jid);
      throw err;
    }
  }

  private subscribeLater(jid: string): void {
    if (this.presenceSubscribed.has(jid) || !this.isOpen()) return;
    this.track(this.subscribePresence(jid), 'presence subscription');
  }

  /**
   * The event with every LID it names as a person replaced by the number Baileys' LID mapping store holds for it
   * (docs/baileys-engine.md, "One identity per contact"); what the store does not know stays a LID. A failing store
   * leaves the event as it is: it is never held back for it.
   */
  private async withNumbers(event: EngineEvent): Promise<EngineEvent> {
    const lookup = this.lidLookup();
    const lids = lookup ? lidsNamedIn(event) : [];
    if (!lookup || !lids.length) return event;
    try {
      const numbers = await numbersFor(lids, lookup);
      if (!numbers.size) return event;
      const chat = chatNamedIn(event);
      for (const [lid, pn] of numbers) {
        if (lid === chat) this.addressing.learnChat(lid, pn);
        else this.addressing.learnPerson(lid, pn);
      }
      return withNumbers(event, numbers);
    } catch (err) {
      this.deps.logger.warn({ err: describe(err), event: event.type }, 'resolving LIDs to numbers failed; the event keeps them');
      return event;
    }
  }

  private lidLookup(): ((lids: string[]) => Promise<Array<{ lid: string; pn: string }> | null>) | null {
    const store = this.deps.sock.signalRepository?.lidMapping;
    return store ? (lids) => store.getPNsForLIDs(lids) : null;
  }

  private needsNumbers(event: EngineEvent): boolean {
    return Boolean(this.lidLookup()) && lidsNamedIn(event).length > 0;
  }

  async logout(): Promise<void> {
    if (this.phase === 'closed' || this.closeRequested) throw new EngineConnectionClosedError(this.deps.sessionId, 'log out');
    try {
      // Baileys tells the network to remove this companion device, then ends the socket with 401 (logged_out)
      await this.deps.sock.logout();
    } catch (err) {
      await this.close();
      throw new Error(`logout did not reach WhatsApp: ${describe(err)}`, { cause: err });
    }
    await this.settle();
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return this.credsSaved;
    this.closeRequested = true;
    try {
      await this.deps.sock.end(undefined);
    } catch (err) {
      this.deps.logger.warn({ err: describe(err) }, 'baileys socket end failed');
    }
    await this.settle();
  }

  /** Waits (bounded) for the socket's close event, then for pending creds writes, so a takeover reads the latest. */
  private async settle(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.deps.connectTimeoutMs);
    });
    const outcome = await Promise.race([this.closed.then(() => 'closed' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.finish({ type: 'close', reason: 'closed_by_us', statusCode: null, message: 'socket did not confirm the close' });
    await this.credsSaved;
  }

  private onConnectionUpdate(update: Partial<ConnectionState>): void {
    if (this.phase === 'closed') return;
    if (update.qr) {
      this.setPhase('awaiting_pairing');
      this.emit({ type: 'qr', qr: update.qr });
    }
    if (update.connection === 'open') {
      const account = accountFrom(this.deps.sock.user ?? this.deps.creds.me);
      if (!account) {
        this.deps.logger.error({ user: this.deps.sock.user?.id }, 'WhatsApp opened a connection without a usable account id');
        return;
      }
      this.setPhase('open');
      this.emit({ type: 'open', account });
      this.inbound.replay();
    }
    if (update.connection === 'close') {
      const error = update.lastDisconnect?.error;
      // a DNS, TCP or TLS failure is network trouble whatever code Baileys gave it (500 would read as bad_session
      // and wipe a good pairing because of a proxy's certificate)
      const cause = closeCauseOf(error);
      this.finish({
        type: 'close',
        reason: this.closeRequested ? 'closed_by_us' : cause.transport ? 'transient' : closeReasonFor(cause.statusCode),
        statusCode: cause.statusCode,
        message: cause.message,
      });
    }
  }

  private onCredsUpdate(update: Partial<AuthenticationCreds>): void {
    // the socket applies the update to the creds object too; doing it here keeps the snapshot right whatever the order
    Object.assign(this.deps.creds, update);
    this.credsSaved = this.credsSaved
      .then(() => this.deps.auth.writeCreds(this.deps.creds))
      .catch((err) => this.deps.logger.error({ err: describe(err) }, 'storing WhatsApp credentials failed'));
  }

  /**
   * Baileys' `holdReceipt` (patched, held-receipts.ts): the receipt of a message it decrypted, sent once what the
   * message became is durable (released by onMessagesUpsert).
   */
  holdReceipt(msg: WAMessage, send: () => Promise<void>): void {
    this.receipts.hold(msg, send);
  }

  private onMessagesUpsert({ messages, type }: BaileysEventMap['messages.upsert']): void {
    // 'append' is what WhatsApp held while the device was away (offline delivery), and the echo of our own sends:
    // news like 'notify' (an echo collides with its stored row on (session, waMessageId) and stores nothing).
    // History sync does not come this way (messaging-history.set).
    const news = type === 'notify' || type === 'append';
    for (const raw of messages) {
      // each message's receipt goes once every event it became is durable (none: at once)
      let durable: Promise<unknown> = Promise.resolve();
      try {
        if (news) durable = Promise.all(this.eventsOf(raw, type));
      } catch (err) {
        // a message we cannot read would come back at every connect if its receipt were held: it goes, and is logged
        this.deps.logger.error({ err: describe(err), waMessageId: raw.key.id }, 'an inbound message could not be read; it is dropped');
      }
      this.receipts.release(raw, durable);
    }
  }

  /** What one upserted message becomes, each event emitted; their promises say when each is durable. */
  private eventsOf(raw: WAMessage, type: 'notify' | 'append'): Array<Promise<void>> {
    const ownJid = this.ownJid();
    const encode = (content: proto.IMessage) => this.deps.runtime.encodeMessage(content);
    this.addressing.learnKey(raw.key);
    this.pushNameEchoes.sawMessage(raw);
    const vote = raw.message ? unwrapContent(raw.message).pollUpdateMessage : null;
    if (vote) return [this.pollVotes.encrypted(raw, vote)];
    const change = protocolEventFrom(raw, ownJid);
    if (change) return [this.emit(change)];
    const message = inboundMessageFrom(raw, ownJid, encode);
    const durable = [
      ...(message ? [this.emit({ type: 'message', message })] : []),
      ...receiptsFoldedInto(raw).map((e) => this.emit(e)),
      ...reactionsFoldedInto(raw, ownJid).map((e) => this.emit(e)),
    ];
    // presence.update (typing, online) arrives only for chats we subscribed to: the chats we talk to
    if (message && !message.fromMe && type === 'notify' && raw.key.remoteJid && isPersonJid(raw.key.remoteJid)) this.subscribeLater(raw.key.remoteJid);
    return durable;
  }

  private onMessagesUpdate(updates: BaileysEventMap['messages.update']): void {
    for (const update of updates) {
      this.emitIf(receiptFromUpdate(update));
      // votes Baileys (or a store in front of it) already decrypted
      for (const pollUpdate of update.update.pollUpdates ?? []) {
        if (!pollUpdate.pollUpdateMessageKey || !pollUpdate.vote) continue;
        this.pollVotes.decrypted(update.key, pollUpdate.pollUpdateMessageKey as WAMessageKey, pollUpdate.vote);
      }
    }
  }

  /** Async work started from Baileys' synchronous emitter: failures are logged, never left unhandled. */
  private track(work: Promise<void>, what: string): void {
    work.catch((err) => this.deps.logger.warn({ err: describe(err), what }, 'handling a baileys event failed'));
  }

  /**
   * The close is reported only after pending creds writes: after pairing WhatsApp closes with 515 and the runner
   * connects again at once, and that socket must read the paired creds, not the ones from before the scan.
   */
  private finish(event: Extract<EngineEvent, { type: 'close' }>): void {
    if (this.phase === 'closed') return;
    this.setPhase('closed');
    this.inbound.stop();
    this.receipts.close();
    this.deps.onClosed(event.reason);
    void this.credsSaved.then(() => {
      this.markClosed();
      this.emit(event);
    });
  }

  private setPhase(phase: Phase): void {
    this.phase = phase;
    for (const wake of this.phaseWaiters) wake();
  }

  private async waitForPhase(wanted: Phase[], action: string): Promise<void> {
    const deadline = Date.now() + this.deps.connectTimeoutMs;
    while (!wanted.includes(this.phase)) {
      if (this.phase === 'closed' || this.closeRequested) throw new EngineConnectionClosedError(this.deps.sessionId, action);
      if (this.phase === 'open') throw new Error(`cannot ${action}: session ${this.deps.sessionId} is already connected`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`cannot ${action}: WhatsApp did not get ready within ${this.deps.connectTimeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.phaseWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, remaining);
        this.phaseWaiters.add(wake);
      });
    }
  }

  private isOpen(): boolean {
    return this.phase === 'open' && !this.closeRequested;
  }

  private assertOpen(action: string): void {
    if (this.phase === 'closed' || this.closeRequested) throw new EngineConnectionClosedError(this.deps.sessionId, action);
    if (this.phase !== 'open') throw new Error(`cannot ${action}: session ${this.deps.sessionId} is not connected yet`);
  }

  /** Baileys rejects with Boom errors whose text is terse; the caller gets one clear Error either way. */
  private async call<T>(action: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (this.phase === 'closed') throw new EngineConnectionClosedError(this.deps.sessionId, action);
      throw new Error(`cannot ${action}: ${describe(err)}`, { cause: err });
    }
  }

  private ownJid(): string | null {
    return toUserJid(this.deps.sock.user?.id) ?? toUserJid(this.deps.sock.user?.phoneNumber) ?? toUserJid(this.deps.creds.me?.id);
  }

  /** Emits the event (if any); resolves once it is durable (InboundHandover.emit), at once when there is none. */
  private emitIf(event: EngineEvent | null): Promise<void> {
    return event ? this.emit(event) : Promise.resolve();
  }

  private emit(event: EngineEvent): Promise<void> {
    return this.inbound.emit(event);
  }

  /** An exception thrown inside Baileys' event emitter would break its flow; ours stay here. */
  private guard(what: string, run: () => void): void {
    try {
      run();
    } catch (err) {
      this.deps.logger.error({ err: describe(err), what }, 'handling a baileys event failed');
    }
  }
}

/** A person's chat (number or LID), not a group, broadcast or newsletter: the chats whose presence WhatsApp Web follows. */
function isPersonJid(jid: string): boolean {
  return Boolean(toUserJid(jid) ?? toLid(jid));
}

