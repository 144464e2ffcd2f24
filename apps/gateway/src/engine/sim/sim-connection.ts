import {
  DomainError,
  isErrorCode,
  mediaContent,
  MessageKeyRef,
  OutboundContent,
  OutboundMessage,
  SentMessage,
  SessionActionArgs,
  SessionActionName,
  SessionActionResult,
  SIM_CLOSE_CODES,
  SIM_DEVICE_PATH,
  SimAccount,
  SimDeviceFrame,
  SimDeviceOp,
  SimDeviceOps,
  SimInboundMessage,
  SimNetworkEvent,
  SimNetworkFrame,
  SimOutboundContent,
  SimSendArgs,
} from '@app/contracts';
import { WebSocket } from 'ws';
import type { CloseReason, ConnectOptions, EngineConnection, EngineEvent, GroupInfo, InboundMessage } from '../engine.interface';

export interface SimConnectionOptions {
  simUrl: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** ping period; a ping without a pong by the next one ends the connection (0 = off) */
  keepaliveMs?: number;
}

interface PendingRequest {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** How long close() waits for the network to acknowledge before cutting the socket. */
const CLOSE_GRACE_MS = 2000;

/** Maps the network's WebSocket close code to the engine's close reason and the WhatsApp-like status code. */
export function closeReasonFor(code: number): { reason: CloseReason; statusCode: number | null } {
  switch (code) {
    case SIM_CLOSE_CODES.loggedOut:
      return { reason: 'logged_out', statusCode: 401 };
    case SIM_CLOSE_CODES.forbidden:
      return { reason: 'forbidden', statusCode: 403 };
    case SIM_CLOSE_CODES.clientVersionRefused:
      return { reason: 'client_version_refused', statusCode: 405 };
    case SIM_CLOSE_CODES.replaced:
      return { reason: 'replaced', statusCode: 440 };
    case SIM_CLOSE_CODES.restartRequired:
      return { reason: 'restart_required', statusCode: 515 };
    case SIM_CLOSE_CODES.badSession:
      return { reason: 'bad_session', statusCode: null };
    default:
      // drops (1006), a stream error without a code (4500, as Baileys' 500), refused connections, protocol errors, a
      // simulator shutting down: try again later
      return { reason: 'transient', statusCode: code >= 4000 ? code - 4000 : null };
  }
}

/** The device endpoint of each simulator URL, parsed once: a failover connects hundreds of sessions at once. */
const DEVICE_ENDPOINTS = new Map<string, string>();

export function deviceSocketUrl(simUrl: string, sessionId: string): string {
  let endpoint = DEVICE_ENDPOINTS.get(simUrl);
  if (endpoint === undefined) {
    const url = new URL(simUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${SIM_DEVICE_PATH}`;
    url.search = '';
    endpoint = url.toString();
    DEVICE_ENDPOINTS.set(simUrl, endpoint);
  }
  return `${endpoint}?${new URLSearchParams({ sessionId }).toString()}`;
}

/**
 * One device connection to the network simulator. Every outcome, including a simulator that is down,
 * ends in exactly one `close` event; nothing is thrown at the caller's event loop.
 */
export class SimConnection implements EngineConnection {
  private readonly ws: WebSocket;
  private readonly pending = new Map<number, PendingRequest>();
  private nextRequestId = 1;
  /** Frames are handled in order, one at a time (storing a credential happens before `open` is told). */
  private frames: Promise<void> = Promise.resolve();
  private closingByUs = false;
  /** set when the keepalive gave up on a network that stopped answering */
  private keepaliveLapsed = false;
  private keepalive: NodeJS.Timeout | null = null;
  /** the transport error before an abrupt close (`connect ECONNREFUSED …`), which says more than `socket closed (1006)` */
  private transportError: string | null = null;
  private closeEmitted = false;
  /** the account's jid once the network opened the device (a pairing or a resume) */
  private ownJid: string | null = null;
  private readonly closed: Promise<void>;
  private markClosed!: () => void;

  constructor(
    private readonly options: SimConnectionOptions,
    private readonly session: ConnectOptions,
    credential: unknown,
  ) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.ws = new WebSocket(deviceSocketUrl(options.simUrl, session.sessionId), { handshakeTimeout: options.connectTimeoutMs });
    this.ws.on('open', () => {
      this.sendFrame({ type: 'hello', credential: credential ?? null });
      this.startKeepalive();
    });
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let frame: SimNetworkFrame;
      try {
        frame = JSON.parse(data.toString()) as SimNetworkFrame;
      } catch {
        this.session.logger.warn({ sessionId: session.sessionId }, 'network simulator sent a frame that is not JSON');
        return;
      }
      this.frames = this.frames.then(() => this.handleFrame(frame)).catch((err) => {
        this.session.logger.error({ err, sessionId: session.sessionId }, 'handling a network frame failed');
      });
    });
    // the 'close' event always follows an 'error', so the error itself only needs logging
    this.ws.on('error', (err) => {
      this.transportError = err.message;
      this.session.logger.debug({ err, sessionId: session.sessionId }, 'network socket error');
    });
    this.ws.on('close', (code, reason) => this.onSocketClosed(code, reason.toString()));
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    const { code } = await this.request('requestPairingCode', { phoneNumber });
    return code;
  }

  async createGroup(subject: string, participants: string[]): Promise<GroupInfo> {
    // the simulator's own bookkeeping (session, time) stays on its side
    const { sessionId: _session, createdAt: _created, ...group } = await this.request('createGroup', { subject, participants });
    return group;
  }

  /** One operation of SessionActionMap, played by the simulator (apps/network-sim/src/actions). */
  async perform<A extends SessionActionName>(action: A, args: SessionActionArgs<A>): Promise<SessionActionResult<A>> {
    return (await this.request('action', { action, args })) as SessionActionResult<A>;
  }

  /** The network stores a message once per waMessageId, so a re-send after a crash is acknowledged, not shown twice. */
  async send(message: OutboundMessage): Promise<SentMessage> {
    const { waMessageId, timestamp } = await this.request('send', toSendArgs(message));
    const { content } = message;
    if (content.type === 'reaction' && this.ownJid) {
      // the account's own reaction comes back as Baileys' does (its own messages echoed): the target's reactions and a
      // message.reaction, on either engine (issue 38)
      this.emit({ type: 'reaction', waMessageId: content.target.waMessageId, chatJid: content.target.chatJid, from: this.ownJid, emoji: content.emoji, fromMe: true });
    }
    return { waMessageId, timestamp, raw: encodeRaw(message.content) };
  }

  async sendPresence(chatJid: string, presence: 'composing' | 'paused'): Promise<void> {
    await this.request('presence', { chatJid, presence });
  }

  async markRead(keys: MessageKeyRef[]): Promise<void> {
    if (keys.length === 0) return;
    await this.request('read', { keys: keys.map(({ waMessageId, chatJid, fromMe, participant }) => ({ waMessageId, chatJid, fromMe, participant })) });
  }

  /**
   * Unlinks the device. Connected: the network answers and closes the socket (close event `logged_out`).
   * Not connected: the phone-side unlink of the control API does the same for the stored pairing.
   */
  async logout(): Promise<void> {
    try {
      if (this.ws.readyState === WebSocket.OPEN && !this.closeEmitted) {
        try {
          await this.request('logout', {});
        } catch (err) {
          // conflict: the device was not paired (QR flow), so there is nothing to unlink
          if (!(err instanceof DomainError && err.code === 'conflict')) throw err;
        }
        await Promise.race([this.closed, new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
      } else {
        await this.unlinkOverControlApi();
      }
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    if (!this.closeEmitted) {
      // the acks of events the gateway has just made durable are sent from promise callbacks that may still be queued:
      // one turn of the event loop lets them go out ahead of the close frame, so the network keeps nothing stored twice
      await new Promise((resolve) => setImmediate(resolve));
      // CLOSING/CLOSED: the network ended it first, and its reason is the one to report
      if (this.ws.readyState === WebSocket.CONNECTING || this.ws.readyState === WebSocket.OPEN) {
        this.closingByUs = true;
        this.ws.close(1000, 'closed by device');
      }
      const cut = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
      cut.unref();
      await this.closed;
      clearTimeout(cut);
    }
    await this.closed;
  }

  private async handleFrame(frame: SimNetworkFrame): Promise<void> {
    if (this.closeEmitted) return;
    switch (frame.type) {
      case 'qr':
        return this.emit({ type: 'qr', qr: frame.qr });
      case 'paired':
        try {
          await this.session.auth.writeCreds(frame.credential);
        } catch (err) {
          // a pairing we cannot keep is worse than none: end it, the runner reconnects (fresh QR)
          this.session.logger.error({ err, sessionId: this.session.sessionId }, 'storing the device credential failed');
          this.ws.terminate();
          return;
        }
        this.ownJid = frame.credential.account.jid;
        return this.emit({ type: 'open', account: toAccount(frame.credential.account) });
      case 'open':
        this.ownJid = frame.account.jid;
        return this.emit({ type: 'open', account: toAccount(frame.account) });
      case 'message':
      case 'receipt':
      case 'reaction':
      case 'poll-vote':
      case 'presence':
      case 'call':
      case 'edit':
      case 'revoke':
      case 'group-update':
      case 'group-participants':
      case 'contact':
      case 'chat-update':
      case 'history':
      case 'label':
      case 'status':
      case 'channel-message': {
        const { eventId, ...event } = frame;
        // acknowledged only once the gateway has made it durable; not taken = not acked, so the network delivers it again
        this.session.onEvent(toEngineEvent(event)).then(
          () => this.sendFrame({ type: 'ack', eventId }),
          (err) => this.session.logger.debug({ err: String(err), sessionId: this.session.sessionId, event: event.type }, 'event not taken; left un-acknowledged'),
        );
        return;
      }
      case 'response': {
        const request = this.pending.get(frame.id);
        if (!request) return;
        this.pending.delete(frame.id);
        clearTimeout(request.timer);
        if (frame.ok) request.resolve(frame.result);
        else request.reject(new DomainError(isErrorCode(frame.error.code) ? frame.error.code : 'internal', frame.error.message, frame.error.details ?? {}));
        return;
      }
    }
  }

  private request<K extends SimDeviceOp>(op: K, args: SimDeviceOps[K]['args']): Promise<SimDeviceOps[K]['result']> {
    if (this.ws.readyState !== WebSocket.OPEN || this.closeEmitted) {
      return Promise.reject(new DomainError('conflict', 'the session is not connected to the network', { op }));
    }
    const id = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new DomainError('gateway_unavailable', 'the network did not answer in time', { op }));
      }, this.options.requestTimeoutMs);
      this.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, timer });
      this.sendFrame({ type: 'request', id, op, args } as SimDeviceFrame);
    });
  }

  private sendFrame(frame: SimDeviceFrame): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  /** A network that stops answering (the `silent` fault; a half-open TCP connection) is noticed here, not never. */
  private startKeepalive(): void {
    const every = this.options.keepaliveMs ?? 0;
    if (every <= 0) return;
    let answered = true;
    this.ws.on('pong', () => (answered = true));
    this.keepalive = setInterval(() => {
      if (!answered) {
        this.keepaliveLapsed = true;
        this.ws.terminate();
        return;
      }
      answered = false;
      this.ws.ping();
    }, every);
    this.keepalive.unref();
  }

  private onSocketClosed(code: number, message: string): void {
    if (this.keepalive) clearInterval(this.keepalive);
    if (this.keepaliveLapsed) message = `the network stopped answering (no pong within ${this.options.keepaliveMs} ms)`;
    else if (!message && this.transportError) message = this.transportError;
    for (const [id, request] of this.pending) {
      clearTimeout(request.timer);
      request.reject(new DomainError('conflict', 'the connection to the network closed', { id }));
    }
    this.pending.clear();
    const { reason, statusCode } = this.closingByUs ? { reason: 'closed_by_us' as const, statusCode: null } : closeReasonFor(code);
    // queued behind the frames already received, so `open` never arrives after `close`
    this.frames = this.frames.then(() => {
      if (this.closeEmitted) return;
      this.emit({ type: 'close', reason, statusCode, message: message || `socket closed (${code})` });
      this.closeEmitted = true;
      this.markClosed();
    });
  }

  private async unlinkOverControlApi(): Promise<void> {
    const url = new URL(`sim/sessions/${encodeURIComponent(this.session.sessionId)}/unlink`, this.options.simUrl.replace(/\/?$/, '/'));
    try {
      const res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(this.options.requestTimeoutMs) });
      // 404: the network never saw this device, so there is nothing to unlink
      if (!res.ok && res.status !== 404) throw new Error(`status ${res.status}`);
    } catch (err) {
      throw new DomainError('gateway_unavailable', 'could not reach the network simulator to unlink the device', { reason: String(err) });
    }
  }

  private emit(event: EngineEvent): void {
    this.session.onEvent(event).catch((err) => {
      this.session.logger.error({ err, sessionId: this.session.sessionId, event: event.type }, 'engine event handler failed');
    });
  }
}

function toAccount(account: SimAccount): { jid: string; lid: string | null; phoneNumber: string } {
  return { jid: account.jid, lid: account.lid ?? null, phoneNumber: account.phoneNumber };
}

/** The whole OutboundMessage on the wire; only the bytes change form (base64). */
export function toSendArgs(message: OutboundMessage): SimSendArgs {
  return {
    waMessageId: message.waMessageId,
    to: message.to,
    content: toWireContent(message.content),
    quoted: message.quoted ? { ...message.quoted, raw: message.quoted.raw ? Buffer.from(message.quoted.raw).toString('base64') : null } : null,
    mentions: message.mentions,
    ...(message.statusPost ? { statusPost: message.statusPost } : {}),
  };
}

function toWireContent(content: OutboundContent): SimOutboundContent {
  if (!('media' in content)) return content;
  const media = { data: content.media.data.toString('base64'), mimetype: content.media.mimetype, filename: content.media.filename };
  return mediaContent(content.type, media, 'caption' in content ? content.caption : null);
}

/**
 * The simulator has no proto encoding; `raw` keeps what a quote or a retry would need of the content, as JSON
 * (media as its description, not its bytes, so the stored copy stays small).
 */
export function encodeRaw(content: OutboundContent): Uint8Array {
  const described =
    'media' in content
      ? { ...content, media: { mimetype: content.media.mimetype, filename: content.media.filename, size: content.media.data.length } }
      : content;
  return Buffer.from(JSON.stringify(described), 'utf8');
}

export function toInboundMessage(m: SimInboundMessage): InboundMessage {
  return {
    id: m.id,
    from: m.from,
    chatJid: m.chatJid,
    text: m.text,
    timestamp: m.timestamp,
    fromMe: false,
    type: m.type,
    media: m.media
      ? { mimetype: m.media.mimetype, size: m.media.size, filename: m.media.filename, caption: m.media.caption, ref: { engine: 'sim', mediaId: m.media.mediaId } }
      : null,
    location: m.location,
    contact: m.contact,
    poll: null,
    quotedWaMessageId: m.quotedWaMessageId,
    mentions: m.mentions,
    raw: Buffer.from(JSON.stringify(m), 'utf8'),
    pushName: m.pushName || undefined,
    verifiedName: m.verifiedName || undefined,
  };
}

/** One network event as the engine seam names it. */
export function toEngineEvent(event: SimNetworkEvent): EngineEvent {
  switch (event.type) {
    case 'message':
      return { type: 'message', message: toInboundMessage(event.message) };
    case 'reaction':
      // contacts react through the network; the device's own reactions are echoed by send(), as Baileys echoes them
      return { ...event, fromMe: false };
    case 'contact':
      return { type: 'contacts', contacts: [event.contact] };
    case 'history':
      return { type: 'history', chats: event.chats, messages: event.messages.map((m) => ({ ...toInboundMessage(m), fromMe: m.fromMe })) };
    case 'status': {
      const { id, from, type, text, media, timestamp } = event.status;
      const view = media ? { mimetype: media.mimetype, size: media.size, filename: media.filename, caption: media.caption } : null;
      return { type: 'status', status: { waMessageId: id, from, type, text, media: view, timestamp } };
    }
    default:
      return event;
  }
}
