import pino from 'pino';
import { DomainError, MessageKeyRef, OutboundMessage, SentMessage } from '@app/contracts';
import { toMessageView } from '@app/database';
import { MemoryMessageStore } from '../../../../test/fakes/memory-message-store';
import { recordingEventSink } from '../../../../test/fakes/recording-event-sink';
import type { EngineConnection, GroupInfo } from '../engine/engine.interface';
import { SendPriority } from '../campaigns/send-priority';
import { CampaignSendHooks, DRAIN_BATCH, MAX_LIVE_ATTEMPTS, OutboundSender, typingMs } from './outbound-sender';

/** Plays the network: stores each waMessageId once, as WhatsApp does, and counts every attempt. */
class NetworkConnection implements EngineConnection {
  readonly attempts: OutboundMessage[] = [];
  readonly stored = new Map<string, OutboundMessage>();
  readonly presences: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** errors thrown by the next sends, in order */
  failures: Error[] = [];
  /** when set, a send waits for it before the network answers */
  gate: Promise<void> | null = null;
  async send(message: OutboundMessage): Promise<SentMessage> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      this.attempts.push(message);
      await new Promise((r) => setImmediate(r));
      if (this.gate) await this.gate;
      const failure = this.failures.shift();
      if (failure) throw failure;
      if (!this.stored.has(message.waMessageId)) this.stored.set(message.waMessageId, message);
      return { waMessageId: message.waMessageId, timestamp: 5_000, raw: Buffer.from(`raw:${message.waMessageId}`) };
    } finally {
      this.inFlight -= 1;
    }
  }
  async sendPresence(chatJid: string, presence: 'composing' | 'paused') {
    this.presences.push(`${presence} ${chatJid}`);
  }
  async markRead(_keys: MessageKeyRef[]) {}
  async perform(): Promise<never> {
    throw new Error('not used here');
  }
  async requestPairingCode() {
    return '';
  }
  async createGroup(): Promise<GroupInfo> {
    throw new Error('not used');
  }
  async logout() {}
  async close() {}
}

const CHAT = '15550002222@s.whatsapp.net';

/** `store`: the same log seen by another holder of the session (a gateway that took over after a crash). */
function setup(opts: { presenceTyping?: boolean; ttlMs?: number; store?: MemoryMessageStore; campaigns?: CampaignSendHooks } = {}) {
  const store = opts.store ?? new MemoryMessageStore();
  const conn = new NetworkConnection();
  const { sink, events } = recordingEventSink();
  const waits: number[] = [];
  let live: EngineConnection | null = conn;
  let now = 10_000;
  const hooks = { afterNetworkAck: () => undefined as void };
  const sender = new OutboundSender({
    sessionId: 'ses_1',
    organizationId: 'org_1',
    store,
    events: sink,
    settings: { ttlMs: opts.ttlMs ?? 60_000, typingMsPerChar: 40, typingMinMs: 500, typingMaxMs: 3000 },
    live: () => live,
    logger: pino({ level: 'silent' }),
    clock: () => now,
    sleep: async (ms) => void waits.push(ms),
    afterNetworkAck: () => hooks.afterNetworkAck(),
    campaigns: opts.campaigns,
  });
  store.now = () => now;
  store.presenceTyping = opts.presenceTyping ?? false;
  return {
    store, conn, events, sender, waits, hooks,
    setLive: (c: EngineConnection | null) => (live = c),
    advance: (ms: number) => (now += ms),
    named: (name: string) => events.filter((e) => e.event === name),
  };
}

describe('OutboundSender', () => {
  it('sends queued messages one at a time in order, each once, and publishes message.sent per message', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_03', waMessageId: 'W3', text: 'third' });
    t.store.queue({ id: 'msg_01', waMessageId: 'W1', text: 'first' });
    t.store.queue({ id: 'msg_02', waMessageId: 'W2', text: 'second' });
    await Promise.all([t.sender.trigger(), t.sender.trigger(), t.sender.trigger()]);
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1', 'W2', 'W3']);
    expect(t.conn.maxInFlight).toBe(1);
    expect(t.conn.attempts[0]).toEqual({ waMessageId: 'W1', to: CHAT, content: { type: 'text', text: 'first' }, quoted: null, mentions: [] });
    const sent = t.named('message.sent');
    expect(sent.map((e) => e.payload.message.id)).toEqual(['msg_01', 'msg_02', 'msg_03']);
    expect(sent[0].payload.message).toMatchObject({ status: 'sent', sentAt: 5_000, waMessageId: 'W1', direction: 'out' });
    expect(sent[0].payload.message).not.toHaveProperty('mediaRef');
    expect(t.store.rows.every((r) => r.status === 'sent')).toBe(true);
    // the Message built before the record is the recorded row's
    for (const e of sent) expect(e.payload.message).toEqual(toMessageView(t.store.byId(e.payload.message.id)!));
  });

  it('records the sends the network took while a record was written in one statement (group commit), a lone one at once', async () => {
    const t = setup();
    for (let i = 1; i <= 5; i += 1) t.store.queue({ id: `msg_0${i}`, waMessageId: `W${i}`, text: `m${i}` });
    // the first record is slow: the drain goes on sending meanwhile, and what it sent is recorded together after it
    let release = () => undefined as void;
    const slow = new Promise<void>((r) => (release = r));
    let first = true;
    t.store.beforeMarkSent = async () => {
      if (!first) return;
      first = false;
      await slow;
    };
    t.hooks.afterNetworkAck = () => {
      if (t.conn.attempts.length === 5) release();
    };
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1', 'W2', 'W3', 'W4', 'W5']);
    expect(t.store.recordedBatches).toEqual([1, 4]);
    expect(t.named('message.sent').map((e) => e.payload.message.id)).toEqual(['msg_01', 'msg_02', 'msg_03', 'msg_04', 'msg_05']);
    expect(t.store.rows.every((r) => r.status === 'sent')).toBe(true);
  });

  it(`reads the queue ${DRAIN_BATCH} rows at a time, reads again only after a full batch, and sends every row once in order`, async () => {
    const t = setup();
    const n = DRAIN_BATCH * 2 + 5;
    const ids = Array.from({ length: n }, (_, i) => `msg_${String(i).padStart(3, '0')}`);
    for (const id of [...ids].reverse()) t.store.queue({ id, waMessageId: `W${id}` });
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(ids.map((id) => `W${id}`));
    expect(t.conn.maxInFlight).toBe(1);
    // two full batches and a short one: no read that finds the queue empty
    expect(t.store.queuedReads).toEqual([DRAIN_BATCH, DRAIN_BATCH, DRAIN_BATCH]);
    expect(t.named('message.sent').map((e) => e.payload.message.id)).toEqual(ids);
  });

  it('a message queued during a drain goes out when its trigger (the signal) runs the drain once more, after the rest', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    t.store.queue({ id: 'msg_02', waMessageId: 'W2' });
    let open!: () => void;
    t.conn.gate = new Promise((r) => (open = r));
    const drained = t.sender.trigger();
    await new Promise((r) => setImmediate(r));
    // accepted after the drain read the queue, then signalled
    t.store.queue({ id: 'msg_03', waMessageId: 'W3' });
    const again = t.sender.trigger();
    open();
    await Promise.all([drained, again]);
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1', 'W2', 'W3']);
    expect(t.store.queuedReads).toHaveLength(2);
  });

  it('stops in the middle of a batch when the connection goes, and resumes with the next row in order', async () => {
    const t = setup();
    for (const i of [1, 2, 3]) t.store.queue({ id: `msg_0${i}`, waMessageId: `W${i}` });
    t.hooks.afterNetworkAck = () => void t.setLive(null);
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1']);
    expect(t.store.rows.map((r) => r.status)).toEqual(['sent', 'queued', 'queued']);
    t.hooks.afterNetworkAck = () => undefined;
    t.setLive(t.conn);
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1', 'W2', 'W3']);
  });

  it('checks the TTL of each row of a batch when it comes to it', async () => {
    const t = setup({ ttlMs: 60_000 });
    for (const i of [1, 2, 3]) t.store.queue({ id: `msg_0${i}`, waMessageId: `W${i}` });
    // the first send takes longer than the TTL: the rows read with it have expired by the time their turn comes
    t.hooks.afterNetworkAck = () => void t.advance(60_001);
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1']);
    expect(t.store.rows.map((r) => r.status)).toEqual(['sent', 'failed', 'failed']);
    expect(t.named('message.failed').map((e) => e.payload.message.id)).toEqual(['msg_02', 'msg_03']);
  });

  it('stops while the session is not working and resumes on the next trigger', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    t.setLive(null);
    await t.sender.trigger();
    expect(t.conn.attempts).toHaveLength(0);
    expect(t.store.byId('msg_01')!.status).toBe('queued');
    t.setLive(t.conn);
    await t.sender.trigger();
    expect(t.conn.stored.has('W1')).toBe(true);
  });

  it('fails a message queued longer than the TTL with its reason, connected or not, and sends the rest', async () => {
    const t = setup({ ttlMs: 60_000 });
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    t.advance(30_000);
    t.store.queue({ id: 'msg_02', waMessageId: 'W2' });
    t.advance(30_001);
    t.setLive(null);
    await t.sender.trigger();
    expect(t.store.byId('msg_01')).toMatchObject({ status: 'failed', error: 'expired: waited more than 60 s for a connection' });
    expect(t.named('message.failed').map((e) => e.payload.message)).toEqual([expect.objectContaining({ id: 'msg_01', status: 'failed', error: expect.stringMatching(/^expired: /) })]);
    expect(t.store.byId('msg_02')!.status).toBe('queued');
    t.setLive(t.conn);
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W2']);
  });

  it('shows typing before each text for a time that grows with its length, bounded, and not before other types', async () => {
    const t = setup({ presenceTyping: true });
    t.store.queue({ id: 'msg_01', waMessageId: 'W1', text: 'k' });
    t.store.queue({ id: 'msg_02', waMessageId: 'W2', text: 'x'.repeat(50) });
    t.store.queue({ id: 'msg_03', waMessageId: 'W3', text: 'x'.repeat(5000) });
    t.store.queue({ id: 'msg_04', waMessageId: 'W4', type: 'location', text: null, location: { latitude: 1, longitude: 2 } });
    await t.sender.trigger();
    expect(t.waits).toEqual([500, 2000, 3000]);
    expect(t.conn.presences).toEqual([`composing ${CHAT}`, `paused ${CHAT}`, `composing ${CHAT}`, `paused ${CHAT}`, `composing ${CHAT}`, `paused ${CHAT}`]);
    expect(t.conn.attempts).toHaveLength(4);
    expect(typingMs('abc', { typingMsPerChar: 40, typingMinMs: 0, typingMaxMs: 3000 })).toBe(120);
  });

  it('fails at once on an error the network will not heal, and goes on with the next message', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1', chatJid: '19999999999@s.whatsapp.net' });
    t.store.queue({ id: 'msg_02', waMessageId: 'W2' });
    t.conn.failures = [new DomainError('validation_error', 'the recipient is not on WhatsApp')];
    await t.sender.trigger();
    expect(t.store.byId('msg_01')).toMatchObject({ status: 'failed', error: 'the recipient is not on WhatsApp' });
    expect(t.named('message.failed')).toHaveLength(1);
    expect(t.store.byId('msg_02')!.status).toBe('sent');
  });

  it('leaves a message queued on a timeout or a closed connection, and resends it with the same waMessageId', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    t.store.queue({ id: 'msg_02', waMessageId: 'W2' });
    t.conn.failures = [new DomainError('gateway_unavailable', 'the network did not answer in time')];
    await t.sender.trigger();
    expect(t.store.byId('msg_01')!.status).toBe('queued');
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1']);
    expect(t.named('message.failed')).toHaveLength(0);
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1', 'W1', 'W2']);
    expect(t.named('message.sent').map((e) => e.payload.message.id)).toEqual(['msg_01', 'msg_02']);
  });

  it(`fails a message that a live connection refused ${MAX_LIVE_ATTEMPTS} times in a row, so it cannot block the queue`, async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    t.conn.failures = Array.from({ length: MAX_LIVE_ATTEMPTS }, () => new Error('socket hiccup'));
    for (let i = 0; i < MAX_LIVE_ATTEMPTS; i += 1) await t.sender.trigger();
    expect(t.store.byId('msg_01')).toMatchObject({ status: 'failed', error: `send failed ${MAX_LIVE_ATTEMPTS} times: socket hiccup` });
  });

  it('a crash between the network ack and the record resends with the same id: the network stores it once, message.sent once', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    t.hooks.afterNetworkAck = () => {
      throw new Error('process died here');
    };
    await t.sender.trigger();
    expect(t.store.byId('msg_01')!.status).toBe('queued');
    expect(t.named('message.sent')).toHaveLength(0);
    t.hooks.afterNetworkAck = () => undefined;
    await t.sender.trigger();
    expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1', 'W1']);
    expect([...t.conn.stored.keys()]).toEqual(['W1']);
    expect(t.named('message.sent')).toHaveLength(1);
  });

  it('holds a receipt that overtook markSent and applies it right after, in order sent → ack', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    let open!: () => void;
    t.conn.gate = new Promise((r) => (open = r));
    const drained = t.sender.trigger();
    await new Promise((r) => setImmediate(r));
    await t.sender.onReceipt('W1', 'delivered');
    await t.sender.onReceipt('W1', 'read');
    expect(t.store.byId('msg_01')!.status).toBe('queued');
    open();
    await drained;
    expect(t.store.byId('msg_01')!.status).toBe('read');
    expect(t.events.map((e) => e.event)).toEqual(['message.sent', 'message.ack']);
    expect(t.named('message.ack')[0].payload).toEqual({ messageId: 'msg_01', waMessageId: 'W1', chatJid: CHAT, status: 'read' });
    expect(t.store.transitions).toEqual(['held delivered msg_01', 'held read msg_01', 'sent msg_01', 'read msg_01']);
  });

  it('a receipt kept on a queued row survives a crash before the send is recorded: the next holder resends and applies it', async () => {
    const a = setup();
    a.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    let open!: () => void;
    a.conn.gate = new Promise((r) => (open = r));
    void a.sender.trigger();
    await new Promise((r) => setImmediate(r));
    await a.sender.onReceipt('W1', 'read');
    // the gateway dies here: the network has the message, the log still says queued, the receipt is on the row
    expect(a.store.byId('msg_01')!.status).toBe('queued');

    const b = setup({ store: a.store });
    await b.sender.trigger();
    expect(b.store.byId('msg_01')!.status).toBe('read');
    expect(b.events.map((e) => e.event)).toEqual(['message.sent', 'message.ack']);
    expect(b.named('message.ack')[0].payload.status).toBe('read');
    open();
  });

  it('a kept receipt whose send was recorded just before a crash is applied by the next holder at its first drain', async () => {
    const a = setup();
    a.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    await a.sender.onReceipt('W1', 'delivered');
    // recorded sent by a gateway that died before applying the kept ack
    await a.store.markSent('msg_01', 5_000, null, 10_000);
    expect(a.store.byId('msg_01')!.status).toBe('sent');

    const b = setup({ store: a.store });
    await b.sender.trigger();
    expect(b.store.byId('msg_01')!.status).toBe('delivered');
    expect(b.named('message.ack').map((e) => e.payload.status)).toEqual(['delivered']);
    // once: a later drain does not announce it again
    await b.sender.trigger();
    expect(b.named('message.ack')).toHaveLength(1);
  });

  it('a receipt arriving while markSent records is applied after it, never lost', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    let receipt: Promise<void> | null = null;
    t.store.beforeMarkSent = async () => {
      receipt ??= t.sender.onReceipt('W1', 'delivered');
    };
    await t.sender.trigger();
    await receipt;
    expect(t.store.byId('msg_01')!.status).toBe('delivered');
    expect(t.named('message.ack').map((e) => e.payload.status)).toEqual(['delivered']);
  });

  it('acks move forward only and publish once per move', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_01', waMessageId: 'W1' });
    await t.sender.trigger();
    await t.sender.onReceipt('W1', 'read');
    await t.sender.onReceipt('W1', 'delivered');
    await t.sender.onReceipt('W1', 'read');
    await t.sender.onReceipt('unknown', 'read');
    expect(t.named('message.ack').map((e) => e.payload.status)).toEqual(['read']);
  });

  it('sends media with its stored bytes, reactions and replies addressed to the messages in the log', async () => {
    const t = setup();
    await t.store.insert({ id: 'msg_00', organizationId: 'org_1', sessionId: 'ses_1', waMessageId: 'IN1', direction: 'in', chatJid: '1-2@g.us', from: '15550003333@s.whatsapp.net', type: 'text', text: 'q', status: 'received', raw: Buffer.from('quoted-raw') });
    const media = { mimetype: 'image/png', size: 3, filename: 'a.png', caption: 'look' };
    t.store.queue({ id: 'msg_01', waMessageId: 'W1', type: 'image', text: 'look', media, quotedWaMessageId: 'IN1', chatJid: '1-2@g.us' }, Buffer.from('png'));
    t.store.queue({ id: 'msg_02', waMessageId: 'W2', type: 'reaction', text: null, reaction: { waMessageId: 'IN1', emoji: '👍' }, chatJid: '1-2@g.us' });
    t.store.queue({ id: 'msg_03', waMessageId: 'W3', type: 'video', text: null, media: { ...media, mimetype: 'video/mp4' } });
    await t.sender.trigger();
    const [image, reaction] = t.conn.attempts;
    expect(image.content).toEqual({ type: 'image', media: { data: Buffer.from('png'), mimetype: 'image/png', filename: 'a.png' }, caption: 'look' });
    expect(image.quoted).toEqual({ waMessageId: 'IN1', chatJid: '1-2@g.us', fromMe: false, participant: '15550003333@s.whatsapp.net', raw: Buffer.from('quoted-raw') });
    expect(reaction.content).toEqual({ type: 'reaction', emoji: '👍', target: { waMessageId: 'IN1', chatJid: '1-2@g.us', fromMe: false, participant: '15550003333@s.whatsapp.net' } });
    expect(t.conn.attempts).toHaveLength(2);
    expect(t.store.byId('msg_03')).toMatchObject({ status: 'failed', error: 'media bytes are missing' });
    expect(t.store.media.size).toBe(0);
  });

  describe('ordinary sends first (SendPriority)', () => {
    /** The campaign scheduler as the sender meets it, over a real SendPriority; `turnAsked` resolves at each turn asked. */
    function campaignHooks(priority: SendPriority) {
      const halted = new Set<string>();
      let asked = () => undefined as void;
      const hooks = {
        halted,
        turnAsked: () => new Promise<void>((resolve) => (asked = resolve)),
        hooks: {
          halted: (id: string) => halted.has(id),
          settled: () => undefined,
          ordinaryStarted: () => priority.ordinaryStarted(),
          campaignTurn: () => {
            asked();
            return priority.campaignTurn();
          },
        } satisfies CampaignSendHooks,
      };
      return hooks;
    }

    /** A campaign step asks for its turn now; checks it is held behind one ordinary send; `turn` resolves when it gets it. */
    async function campaignStepHeld(priority: SendPriority): Promise<{ turn: Promise<() => void> }> {
      let started = false;
      const step = priority.campaignTurn().then((end) => {
        started = true;
        return end;
      });
      await new Promise((r) => setImmediate(r));
      expect(priority.state()).toEqual({ ordinary: 1, running: 0, waiting: 1 });
      expect(started).toBe(false);
      return { turn: step };
    }

    it('holds campaign work on the gateway while an ordinary message is being sent, and lets it go once the network took it', async () => {
      const priority = new SendPriority({ slots: 2, maxWaitMs: 60_000 });
      const t = setup({ campaigns: campaignHooks(priority).hooks });
      t.store.queue({ id: 'msg_01', waMessageId: 'W1', text: 'ordinary' });
      let release = () => undefined as void;
      t.conn.gate = new Promise<void>((r) => (release = r));
      const drained = t.sender.trigger();
      while (t.conn.attempts.length === 0) await new Promise((r) => setImmediate(r));
      // a campaign step asks for its turn while the ordinary message is with the network
      const step = await campaignStepHeld(priority);
      release();
      (await step.turn)();
      await drained;
      expect(priority.state()).toEqual({ ordinary: 0, running: 0, waiting: 0 });
      expect(t.store.byId('msg_01')!.status).toBe('sent');
    });

    it("holds campaign work from the API's signal until the drain has read what it announced, and not for an unsignalled drain", async () => {
      const priority = new SendPriority({ slots: 2, maxWaitMs: 60_000 });
      const t = setup({ campaigns: campaignHooks(priority).hooks });
      t.store.queue({ id: 'msg_01', waMessageId: 'W1', text: 'ordinary' });
      // the queue's read is slow (PostgreSQL busy): the signal's wait covers it
      let open = () => undefined as void;
      let gate = new Promise<void>((r) => (open = r));
      const read = t.store.nextQueued.bind(t.store);
      t.store.nextQueued = async (sessionId: string, limit: number) => {
        await gate;
        return read(sessionId, limit);
      };
      const drained = t.sender.trigger(true);
      const step = await campaignStepHeld(priority);
      open();
      (await step.turn)();
      await drained;
      expect(t.store.byId('msg_01')!.status).toBe('sent');
      expect(priority.state()).toEqual({ ordinary: 0, running: 0, waiting: 0 });

      // a drain nobody signalled (a campaign's own enqueue, the sweep) holds nothing while it reads
      gate = new Promise<void>((r) => (open = r));
      const again = t.sender.trigger();
      await new Promise((r) => setImmediate(r));
      expect(priority.state()).toEqual({ ordinary: 0, running: 0, waiting: 0 });
      open();
      await again;
    });

    it("sends a campaign's message only after its turn, and not at all when its campaign was paused while it waited", async () => {
      const priority = new SendPriority({ slots: 2, maxWaitMs: 60_000 });
      const c = campaignHooks(priority);
      const t = setup({ campaigns: c.hooks });
      t.store.queue({ id: 'msg_01', waMessageId: 'W1', text: 'campaign 1', campaignId: 'cmp_1' });
      t.store.queue({ id: 'msg_02', waMessageId: 'W2', text: 'campaign 2', campaignId: 'cmp_2' });
      // another session's ordinary send is under way on the gateway
      const endOrdinary = priority.ordinaryStarted();
      const asked = c.turnAsked();
      const drained = t.sender.trigger();
      await asked;
      expect(t.conn.attempts).toHaveLength(0);
      // cmp_1 paused while its message waited for its turn: the sender looks at the pause after the turn
      c.halted.add('cmp_1');
      endOrdinary();
      await drained;
      expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W2']);
      expect(t.store.byId('msg_01')!.status).toBe('queued');
      expect(priority.state()).toEqual({ ordinary: 0, running: 0, waiting: 0 });
    });

    it("does not hold a session's campaign message behind the ordinary ones that come after it in the same queue", async () => {
      const priority = new SendPriority({ slots: 1, maxWaitMs: 60_000 });
      const t = setup({ campaigns: campaignHooks(priority).hooks });
      t.store.queue({ id: 'msg_01', waMessageId: 'W1', text: 'ordinary 1' });
      t.store.queue({ id: 'msg_02', waMessageId: 'W2', text: 'campaign', campaignId: 'cmp_1' });
      t.store.queue({ id: 'msg_03', waMessageId: 'W3', text: 'ordinary 2' });
      await t.sender.trigger();
      expect(t.conn.attempts.map((m) => m.waMessageId)).toEqual(['W1', 'W2', 'W3']);
      expect(priority.state()).toEqual({ ordinary: 0, running: 0, waiting: 0 });
    });
  });
});
