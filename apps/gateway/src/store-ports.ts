import type { CatalogEvent, ChannelView, EventType, GroupChanges, GroupNetwork, GroupNetworkParticipant, SessionStatus } from '@app/contracts';
import type { SessionRuntimePatch, SessionRuntimeRow } from '@app/database';
import type { GroupInfo } from './engine/engine.interface';

/**
 * What the gateway's rooms (sessions, messages, contacts) need from the store: a session's row and its groups, the
 * followed channels, and the event sink that commits a change with the events announcing it. Each port has one
 * production implementation (PostgreSQL) and fakes in the unit specs. They sit below the rooms that use them, so a
 * message or a contact reaches the store without importing the session runner's room.
 */

/** The fields of a session row a runner reads at start. */
export type SessionRecord = SessionRuntimeRow & {
  /** the session's proxy URL, opened (PgSessionRecords decrypts `proxyUrlSealed`); null or absent: direct */
  proxyUrl?: string | null;
};
/** A session the table places on this gateway: enough to create its runner without reading the row again. */
export interface PlacedSession {
  id: string;
  organizationId: string;
  status: SessionStatus;
}
/** The fields a runner writes. */
export type SessionRecordPatch = SessionRuntimePatch;

export interface SessionRecords {
  find(sessionId: string): Promise<SessionRecord | null>;
  /**
   * Fenced write of the runner's columns: with `leaseToken`, refused once another holder took a newer token; without
   * one (the lease not acquired yet), refused once the row no longer places the session on this gateway.
   * False when refused: this gateway no longer holds the session.
   */
  update(sessionId: string, patch: SessionRecordPatch, leaseToken: number | null): Promise<boolean>;
  /** The next fencing token of the session's lease (a counter in the row, so it survives Redis). */
  takeLeaseToken(sessionId: string): Promise<number>;
  /** Stores (or refreshes) a group the session created or learnt about. */
  saveGroup(organizationId: string, sessionId: string, group: GroupInfo): Promise<void>;
  /**
   * An admin changed a stored group on the network (subject, description, settings); `network`, when the network
   * described the whole group, replaces its stored network form.
   */
  updateGroup(sessionId: string, groupJid: string, changes: GroupChanges, network?: GroupNetwork): Promise<void>;
  /**
   * Members joined a stored group. `network`: how the network named them in the group (the engine's group-participants
   * event), so the group's network form stays what a send needs; without it that form is forgotten.
   */
  addGroupParticipants(sessionId: string, groupJid: string, jids: string[], network?: GroupNetworkParticipant[]): Promise<void>;
  /** Members left (or were removed from) a stored group. */
  removeGroupParticipants(sessionId: string, groupJid: string, jids: string[], network?: GroupNetworkParticipant[]): Promise<void>;
  /** Members of a stored group were promoted to admin (`admin`) or demoted (null). */
  setGroupAdmins(sessionId: string, groupJid: string, jids: string[], admin: 'admin' | null, network?: GroupNetworkParticipant[]): Promise<void>;
  /** A stored group with its members (the engine's group metadata), or null when unknown here. */
  findGroup(sessionId: string, groupJid: string): Promise<GroupInfo | null>;
  /** Sessions placed on this gateway that should run (it starts those it does not hold), with what a runner starts from. */
  resumable(gatewayId: string): Promise<PlacedSession[]>;
  /** Of the sessions held here, those whose row places them elsewhere now (or that are gone): to hand off. */
  notPlacedOn(sessionIds: string[], gatewayId: string): Promise<string[]>;
}

/** The followed channels the gateway keeps (PostgreSQL `followed_channels`, FollowedChannelsRepository). */
export interface FollowedChannelStore {
  list(sessionId: string): Promise<Array<ChannelView & { named: boolean }>>;
  remember(organizationId: string, sessionId: string, channel: { jid: string } & Partial<Omit<ChannelView, 'jid'>>): Promise<void>;
  forget(sessionId: string, jid: string): Promise<void>;
}

/** An event of one of the gateway's sessions, its payload as the catalog describes its type. */
export type SessionEvent<T extends EventType = EventType> = CatalogEvent<T> & {
  organizationId: string;
  sessionId: string;
};

/** A store transaction, opaque to the gateway (PostgreSQL: the `Tx` of libs/database). */
export type StoreTx = unknown;
/** Events ready to be written by a store statement, opaque to the gateway (PostgreSQL: `OutboxRows`). */
export type StoreOutbox = unknown;

export interface SessionEventSink {
  publish(input: SessionEvent): Promise<unknown>;
  /**
   * A state change and the events announcing it, committed together (the outbox row in the same transaction), so a
   * crash between the two can lose neither: `work` writes through `tx` and names its events with `publish`.
   */
  transact<T>(work: (tx: StoreTx, publish: (input: SessionEvent) => void) => Promise<T>): Promise<T>;
  /**
   * The same guarantee in one store statement, for a change whose events are known before it is made: `write` makes
   * the change and writes `outbox` with it (only when it changed something), and answers what it changed (truthy) or
   * that it changed nothing (false, null); the events are published after it, and only then.
   */
  withOutbox<T>(events: SessionEvent[], write: (outbox: StoreOutbox) => Promise<T>): Promise<T>;
  /**
   * `withOutbox` for a change of several rows in one statement, an event each (the i-th event announces the i-th row's
   * change and is written only when that row changed); `wrote(result, i)` tells from `write`'s answer whether it was,
   * and only those events are published.
   */
  withOutboxEach<T>(events: SessionEvent[], write: (outbox: StoreOutbox) => Promise<T>, wrote: (result: T, index: number) => boolean): Promise<T>;
}
