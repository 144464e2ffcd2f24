import type { Logger } from 'pino';
import type { CatalogEvent, GroupView } from '@app/contracts';
import type { EngineConnection, GroupInfo } from '../engine/engine.interface';
import type { SessionRecords } from '../store-ports';

/**
 * The groups one session creates and learns about: a creation asked twice is made once on the network, and a group is
 * stored and announced (`group.created` once, `group.update` at each change) whether the command's reply or the engine's
 * own group event tells of it first. A part of SessionRunner, which checks the session is connected before a creation.
 */

/** How long an identical group creation (same name and participants) returns the first one's group. */
export const GROUP_CREATION_REPEAT_MS = 10 * 60_000;

export const toGroupView = (g: GroupInfo): GroupView => ({
  groupJid: g.groupJid,
  subject: g.subject,
  description: g.description ?? '',
  ownerJid: g.ownerJid,
  participants: g.participants.length,
  isAnnounce: g.isAnnounce,
  isLocked: g.isLocked,
});

export interface SessionGroupsDeps {
  sessionId: string;
  organizationId: string;
  records: SessionRecords;
  clock: () => number;
  log: Logger;
  /** announces a session event; never throws (SessionRunner.publish logs and drops a failure) */
  publish: (named: CatalogEvent) => Promise<void>;
}

export class SessionGroups {
  /** group jids already announced, so the command reply and the engine's own group event publish once */
  private readonly announced = new Set<string>();
  /** recent group creations by name and participants, so a retried creation returns the first group */
  private readonly creations = new Map<string, { at: number; group: Promise<GroupView> }>();

  constructor(private readonly deps: SessionGroupsDeps) {}

  /**
   * Creates a group on the network through `conn`. The same name and participants again within GROUP_CREATION_REPEAT_MS
   * return the first creation's group instead of making a second one: a client that retries after a failure or a
   * timeout (the network may have created the group before the failure) never duplicates it. See docs/sessions.md.
   */
  create(conn: EngineConnection, name: string, participants: string[]): Promise<GroupView> {
    const now = this.deps.clock();
    for (const [key, creation] of this.creations) if (now - creation.at > GROUP_CREATION_REPEAT_MS) this.creations.delete(key);
    const key = JSON.stringify([name, [...participants].sort()]);
    const earlier = this.creations.get(key);
    if (earlier) return earlier.group;
    const group = this.createOnNetwork(conn, name, participants);
    this.creations.set(key, { at: now, group });
    // a creation the network refused made nothing, so trying it again must reach the network again
    group.catch(() => this.creations.delete(key));
    return group;
  }

  /** The engine told of a group (its own group event): stored, and announced unless the command's reply was first. */
  async learnt(group: GroupInfo, action: 'created' | 'updated'): Promise<void> {
    await this.deps.records.saveGroup(this.deps.organizationId, this.deps.sessionId, group);
    await this.announce(group, action);
  }

  private async createOnNetwork(conn: EngineConnection, name: string, participants: string[]): Promise<GroupView> {
    const group = await conn.createGroup(name, participants);
    // from here the group exists on the network: failing to record or announce it must not fail the command, or
    // the client would retry and the network would hold two groups (the engine's own group events store it again)
    try {
      await this.learnt(group, 'created');
    } catch (err) {
      this.deps.log.error({ err, groupJid: group.groupJid }, 'group created on the network but not recorded');
    }
    return toGroupView(group);
  }

  private async announce(group: GroupInfo, action: 'created' | 'updated'): Promise<void> {
    if (action === 'updated') {
      const { subject, description, isAnnounce, isLocked } = group;
      await this.deps.publish({ event: 'group.update', payload: { groupJid: group.groupJid, changes: { subject, description, isAnnounce, isLocked } } });
      return;
    }
    if (this.announced.has(group.groupJid)) return;
    this.announced.add(group.groupJid);
    await this.deps.publish({ event: 'group.created', payload: toGroupView(group) });
  }
}
