import { AckStatus, OUTBOUND_STATUS_RANK } from '@app/contracts';
import type { AckOutcome, EditedMessage, MemberAckOutcome, MessageRow, MessageStore, NewMessage, SentRecord } from '../../apps/gateway/src/messages/message-store';

/**
 * The gateway's MessageStore in memory, with the repository's rules: one row per (session, waMessageId), queued rows
 * drained in id order, sent/failed only from queued, acks forward only, kept on a queued row until it is sent.
 */
export class MemoryMessageStore implements MessageStore {
  readonly rows: MessageRow[] = [];
  readonly raws = new Map<string, Uint8Array | null>();
  readonly media = new Map<string, Buffer>();
  /** every conditional update that changed a row, in order: `${status} ${id}` */
  readonly transitions: string[] = [];
  /** the session's setting, read with the queue */
  presenceTyping = false;
  /** the limit of every read of the queue, in order */
  readonly queuedReads: number[] = [];
  /** acks kept on queued rows (the `held_ack` column), by message id */
  readonly heldAcks = new Map<string, AckStatus>();
  /** runs inside markSent before it records (a test's hook into the race with receipts) */
  beforeMarkSent: (() => Promise<void>) | null = null;
  now = () => 1_000;

  /** A message as the API accepts it. */
  queue(m: Partial<NewMessage> & { id: string; waMessageId: string }, media?: Buffer): MessageRow {
    const row = this.toRow({ organizationId: 'org_1', sessionId: 'ses_1', direction: 'out', chatJid: '15550002222@s.whatsapp.net', from: null, type: 'text', text: 'hi', status: 'queued', ...m });
    this.rows.push(row);
    if (media) this.media.set(row.id, media);
    return row;
  }

  byId(id: string): MessageRow | undefined {
    return this.rows.find((r) => r.id === id);
  }

  async nextQueued(sessionId: string, limit: number) {
    this.queuedReads.push(limit);
    const messages = this.rows
      .filter((r) => r.sessionId === sessionId && r.status === 'queued')
      .sort((a, b) => a.id.localeCompare(b.id))
      .slice(0, limit)
      .map((r) => ({ ...r }));
    return { messages, presenceTyping: messages.length > 0 && this.presenceTyping };
  }

  async sessionsWithQueued(sessionIds: string[]) {
    return [...new Set(this.rows.filter((r) => r.status === 'queued' && sessionIds.includes(r.sessionId)).map((r) => r.sessionId))];
  }

  /** `dropMedia`: as the statement does, the bytes are dropped unless the record says the message has none */
  async markSent(id: string, sentAt: number, raw: Uint8Array | null, updatedAt: number, dropMedia = true) {
    await this.beforeMarkSent?.();
    const row = this.byId(id);
    if (!row || row.status !== 'queued') return null;
    Object.assign(row, { status: 'sent', sentAt, updatedAt });
    if (raw) this.raws.set(`${row.sessionId}/${row.waMessageId}`, raw);
    if (dropMedia) this.media.delete(id);
    this.transitions.push(`sent ${id}`);
    return { heldAck: this.heldAcks.get(id) ?? null };
  }

  /** the size of every batch recorded (`markSentMany`), in order */
  readonly recordedBatches: number[] = [];

  async markSentMany(sends: ReadonlyArray<SentRecord>) {
    this.recordedBatches.push(sends.length);
    const moved = new Map<string, { heldAck: AckStatus | null }>();
    for (const s of sends) {
      const done = await this.markSent(s.id, s.sentAt, s.raw, s.updatedAt ?? this.now(), s.media !== false);
      if (done) moved.set(s.id, done);
    }
    return moved;
  }

  async markFailed(id: string, error: string) {
    const row = this.byId(id);
    if (!row || row.status !== 'queued') return null;
    Object.assign(row, { status: 'failed', error, updatedAt: this.now() });
    this.media.delete(id);
    this.transitions.push(`failed ${id}`);
    return { ...row };
  }

  async applyAck(sessionId: string, waMessageId: string, status: AckStatus): Promise<AckOutcome | null> {
    const row = this.rows.find((r) => r.sessionId === sessionId && r.waMessageId === waMessageId && r.direction === 'out');
    if (!row || row.status === 'failed' || row.status === 'received' || row.status === 'scheduled' || row.status === 'cancelled') return null;
    const held = this.heldAcks.get(row.id);
    if (row.status === 'queued') {
      if (held !== undefined && OUTBOUND_STATUS_RANK[held] >= OUTBOUND_STATUS_RANK[status]) return null;
      this.heldAcks.set(row.id, status);
      this.transitions.push(`held ${status} ${row.id}`);
      return { held: true };
    }
    if (OUTBOUND_STATUS_RANK[row.status] >= OUTBOUND_STATUS_RANK[status]) return null;
    Object.assign(row, { status, updatedAt: this.now() });
    if (held !== undefined && OUTBOUND_STATUS_RANK[held] <= OUTBOUND_STATUS_RANK[status]) this.heldAcks.delete(row.id);
    this.transitions.push(`${status} ${row.id}`);
    return { moved: { ...row } };
  }

  async heldAcksOf(sessionId: string) {
    return this.rows
      .filter((r) => r.sessionId === sessionId && r.status !== 'queued' && this.heldAcks.has(r.id))
      .filter((r) => OUTBOUND_STATUS_RANK[this.heldAcks.get(r.id)!] > ((OUTBOUND_STATUS_RANK as Record<string, number>)[r.status] ?? Infinity))
      .map((r) => ({ waMessageId: r.waMessageId, status: this.heldAcks.get(r.id)! }));
  }

  async insert(m: NewMessage) {
    if (this.rows.some((r) => r.sessionId === m.sessionId && r.waMessageId === m.waMessageId)) return null;
    const row = this.toRow(m);
    this.rows.push(row);
    if (m.raw) this.raws.set(`${m.sessionId}/${m.waMessageId}`, m.raw);
    return { ...row };
  }

  async applyMemberAck(sessionId: string, waMessageId: string, member: string, status: AckStatus, members: string[]): Promise<MemberAckOutcome | null> {
    const row = this.rows.find((r) => r.sessionId === sessionId && r.waMessageId === waMessageId && r.direction === 'out' && r.status !== 'failed');
    const rank = (s: string | undefined) => (s === undefined ? 0 : (OUTBOUND_STATUS_RANK as Record<string, number>)[s] ?? 0);
    if (!row || rank(row.memberAcks[member]) >= rank(status)) return null;
    row.memberAcks = { ...row.memberAcks, [member]: status };
    const all = members.length ? Math.min(...members.map((m) => rank(row.memberAcks[m]))) : 0;
    const before = row.status;
    const reached = Object.entries(OUTBOUND_STATUS_RANK).find(([, r]) => r === all)?.[0] as MessageRow['status'] | undefined;
    if (row.status !== 'queued' && reached && all > rank(row.status)) row.status = reached;
    row.updatedAt = this.now();
    this.transitions.push(`member ${member} ${status} ${row.id}`);
    return { row: { ...row }, moved: row.status !== before };
  }

  async applyEdit(sessionId: string, waMessageId: string, text: string): Promise<EditedMessage | null> {
    const row = this.rows.find((r) => r.sessionId === sessionId && r.waMessageId === waMessageId && r.revokedAt === null);
    if (!row) return null;
    const previousText = row.media ? row.media.caption : row.text;
    if (previousText === text) return null;
    if (row.media) row.media = { ...row.media, caption: text };
    else row.text = text;
    row.updatedAt = this.now();
    row.editedAt = this.now();
    this.transitions.push(`edited ${row.id}`);
    return { row: { ...row }, previousText };
  }

  async markRevoked(sessionId: string, waMessageId: string) {
    const row = this.rows.find((r) => r.sessionId === sessionId && r.waMessageId === waMessageId && r.revokedAt === null);
    if (!row) return null;
    Object.assign(row, { revokedAt: this.now(), updatedAt: this.now() });
    this.transitions.push(`revoked ${row.id}`);
    return { ...row };
  }

  async applyReaction(sessionId: string, waMessageId: string, from: string, emoji: string) {
    const row = this.rows.find((r) => r.sessionId === sessionId && r.waMessageId === waMessageId);
    if (!row || (row.reactions.find((r) => r.from === from)?.emoji ?? '') === emoji) return null;
    row.reactions = [...row.reactions.filter((r) => r.from !== from), ...(emoji ? [{ from, emoji }] : [])];
    row.updatedAt = this.now();
    return { ...row };
  }

  async applyPollVote(sessionId: string, pollWaMessageId: string, voter: string, options: string[]) {
    const row = this.rows.find((r) => r.sessionId === sessionId && r.waMessageId === pollWaMessageId && r.poll !== null);
    if (!row || JSON.stringify(row.pollVotes.find((v) => v.voter === voter)?.options) === JSON.stringify(options)) return null;
    row.pollVotes = [...row.pollVotes.filter((v) => v.voter !== voter), { voter, options }];
    row.updatedAt = this.now();
    return { ...row };
  }

  async idsByWaIds(sessionId: string, waMessageIds: string[]) {
    return new Map(this.rows.filter((r) => r.sessionId === sessionId && waMessageIds.includes(r.waMessageId)).map((r) => [r.waMessageId, r.id]));
  }

  async findByWaId(sessionId: string, waMessageId: string) {
    const row = this.rows.find((r) => r.sessionId === sessionId && r.waMessageId === waMessageId);
    return row ? { ...row } : null;
  }

  async rawOf(sessionId: string, waMessageId: string) {
    return this.raws.get(`${sessionId}/${waMessageId}`) ?? null;
  }

  async mediaOf(messageId: string) {
    return this.media.get(messageId) ?? null;
  }

  private toRow(m: NewMessage): MessageRow {
    const at = m.createdAt ?? this.now();
    return {
      id: m.id,
      sessionId: m.sessionId,
      organizationId: m.organizationId,
      waMessageId: m.waMessageId,
      direction: m.direction,
      chatJid: m.chatJid,
      from: m.from,
      type: m.type,
      text: m.text ?? null,
      media: m.media ?? null,
      location: m.location ?? null,
      contact: m.contact ?? null,
      poll: m.poll ?? null,
      quotedMessageId: m.quotedMessageId ?? null,
      sendAt: m.sendAt ?? null,
      campaignId: m.campaignId ?? null,
      status: m.status,
      error: null,
      createdAt: at,
      updatedAt: at,
      sentAt: m.sentAt ?? null,
      mediaRef: m.mediaRef ?? null,
      reaction: m.reaction ?? null,
      quotedWaMessageId: m.quotedWaMessageId ?? null,
      mentions: m.mentions ?? [],
      idempotencyKey: m.idempotencyKey ?? null,
      revokedAt: null,
      memberAcks: {},
      editedAt: null,
      reactions: [],
      pollVotes: [],
      fromHistory: m.fromHistory ?? false,
      sendOptions: m.sendOptions ?? null,
    };
  }
}
