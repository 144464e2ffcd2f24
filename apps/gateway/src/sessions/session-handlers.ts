import type { Logger } from 'pino';
import type { EngineConnection, EngineLookups, FollowedChannelBook } from '../engine/engine.interface';
import { InboundEvents } from '../messages/inbound-events';
import type { MessageRow, MessageStore, MessagingSettings } from '../messages/message-store';
import type { ContactBook } from '../contacts/contact-book';
import { type CampaignSendHooks, OutboundSender, type StatusPostLookup } from '../messages/outbound-sender';
import { BacklogPacer, sessionRatePerMin } from '../messages/send-pacing';
import type { SentRecords } from '../messages/sent-records';
import { ChatEvents, type ChatStore } from '../messages/chat-events';
import type { ChatLabelStore } from '../messages/account-extras-events';
import type { FollowedChannelStore, SessionEventSink, SessionRecords } from '../store-ports';

/** channels a session remembers having kept (a bound: a session follows few) */
const KEPT_CHANNELS_MAX = 1000;

/** What a session's handlers of messages, chats and channels need from the gateway (part of SessionRunnerDeps). */
export interface SessionHandlerDeps {
  records: SessionRecords;
  events: SessionEventSink;
  /** the message log, which is also the send queue */
  messages: MessageStore;
  /** the records of sends, grouped across the gateway's sessions (absent: each session records its own) */
  sentRecords?: SentRecords;
  messaging: MessagingSettings;
  /** how the sender waits while showing "typing…" */
  sleep?: (ms: number) => Promise<void>;
  /** fault injection between the network's ack of a send and its record (tests only) */
  afterNetworkAck?: () => void;
  /** the session's contacts kept current from the network (absent: none kept) */
  contacts?: ContactBook;
  /** chats as the network reports them and history syncs (messages/chat-events.ts); absent: ignored */
  chats?: ChatStore;
  /** the labels each chat carries (messages/account-extras-events.ts); absent: label changes are only announced */
  chatLabels?: ChatLabelStore;
  /** the followed channels kept for the Baileys engine's list (a post's channel is remembered); absent: none kept */
  followedChannels?: FollowedChannelStore;
  /** how a status post goes out (its audience): read when it is sent; absent, a status post fails */
  statusPosts?: StatusPostLookup;
  /** told of each inbound message once stored (eager media downloads, media/eager-media-downloads.ts); absent: none */
  inboundStored?: (row: MessageRow) => void;
  /** the campaign scheduler of this gateway, as the sender meets it (absent: no campaigns) */
  campaigns?: CampaignSendHooks;
}

/** The session's own handlers: the runner drives them, they never drive the runner's state. */
export interface SessionHandlers {
  sender: OutboundSender;
  inbound: InboundEvents;
  /** null when the gateway keeps no chats */
  chatEvents: ChatEvents | null;
  /** what the engine may look up in the store (a quoted message's raw form, a group's members) */
  lookups: EngineLookups;
  /** the followed channels handed to the engine; absent when none are kept */
  channels: FollowedChannelBook | undefined;
}

/** Where a session's handlers stand: who it is, and the socket they may use (only while `working`). */
export interface SessionHandlerScope {
  sessionId: string;
  organizationId: string;
  clock: () => number;
  logger: Logger;
  /** the open connection while the session is `working`, else null */
  live: () => EngineConnection | null;
}

/** Builds the sender, inbound and chat-event handlers of one session, and what the engine may ask of the store. */
export function buildSessionHandlers(scope: SessionHandlerScope, deps: SessionHandlerDeps): SessionHandlers {
  const { sessionId, organizationId, clock, logger } = scope;
  const common = { sessionId, organizationId, store: deps.messages, events: deps.events, clock, logger };
  const sender = new OutboundSender({
    ...common,
    settings: deps.messaging,
    live: scope.live,
    sleep: deps.sleep,
    afterNetworkAck: deps.afterNetworkAck,
    pacing: new BacklogPacer({ ratePerMin: () => sessionRatePerMin(deps.records, sessionId) }),
    statusPosts: deps.statusPosts,
    sentRecords: deps.sentRecords,
    campaigns: deps.campaigns,
  });
  const channels = deps.followedChannels ? followedChannelBook(deps.followedChannels, organizationId, sessionId) : undefined;
  const inbound = new InboundEvents({
    ...common,
    records: deps.records,
    sender,
    contacts: deps.contacts,
    chatLabels: deps.chatLabels,
    inboundStored: deps.inboundStored,
    channels,
  });
  const chatEvents = deps.chats ? new ChatEvents({ ...common, chats: deps.chats }) : null;
  const lookups: EngineLookups = {
    message: (_chatJid, waMessageId) => deps.messages.rawOf(sessionId, waMessageId),
    group: (groupJid) => deps.records.findGroup(sessionId, groupJid),
  };
  return { sender, inbound, chatEvents, lookups, channels };
}

/** The engine's view of the followed channels: a post names only its channel, so one already kept is not written again. */
function followedChannelBook(followed: FollowedChannelStore, organizationId: string, sessionId: string): FollowedChannelBook {
  const kept = new Set<string>();
  return {
    list: () => followed.list(sessionId),
    remember: async (c) => {
      if (Object.keys(c).length === 1 && kept.has(c.jid)) return;
      await followed.remember(organizationId, sessionId, c);
      if (kept.size >= KEPT_CHANNELS_MAX) kept.clear();
      kept.add(c.jid);
    },
    forget: async (jid) => {
      kept.delete(jid);
      await followed.forget(sessionId, jid);
    },
  };
}
