/**
 * One WhatsApp Web socket, from the first byte to the close: the Noise handshake, then either a registration (a new
 * companion: `pair-device` refs it shows as QR, `pair-success` once the phone scanned, then the 515 restart) or a
 * login (`<success>`), then routine IQs. Toward SimNetwork it is a DeviceLink: the network's `qr`, `paired` and
 * `open` frames become WhatsApp stanzas here, and its closes become WhatsApp's stream errors and failures.
 */
import { AckStatus, DomainError, LabelUpdatePayload, SimChatChange, SimCredential, SimFaultKind, SimHistoryChat, SimInboundMessage, SimInboundStatus, SimNetworkFrame, STATUS_BROADCAST_JID } from '@app/contracts';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import type { DeviceLink, SimNetwork } from '../sim-network';
import { CertifiedServer } from './certificates';
import { CompanionRegistration, WaDirectory } from './directory';
import { closeStanza, WA_FAULTS } from './faults';
import { encodeFrame, FrameReader, HandshakeResult, NoiseServerHandshake, NoiseTransport } from './noise-server';
import { CompanionHello, enterCode, finishCodeExchange, linkedDevice, verifyDeviceSignature, withDevice } from './phone';
import { answerIq, child, children, IqContext, IqError, iqKey, iqReply, preKeyCountNotification } from './stanzas';
import { act } from './iq';
import { callStanzaAck, callTerminate, deviceCallReject } from './calls';
import { answerGroupIq, answerGroupPictureIq, findGroup, GroupIqContext, groupNotifications, isGroupJid } from './groups';
import { OfflineBatch } from './offline-delivery';
import { isStatusJid, statusAudience, statusMessage } from './statuses';
import { callOffer, ContactEnvelope, contactContentOf, contactEdit, contactRevoke, contextInfoOf, deviceChatState, devicePresenceRequest, newStanzaId, presenceStanza, QuotedMessage, sealPollVote, stanzaTypeOf, WaMessage } from './contact-messages';
import { recordDeviceMessage, SentContent, sentContentOf, SentContext, sentContextOf } from './device-messages';
import { Baileys, BinaryNode, nowSeconds, SERVER_JID } from './wa-kit';
import { appStateOf, AppStateDevice, AppStateCollectionName } from './app-state';
import { mediaHostOf } from './media-server';
import { inboundMediaMessage, isInboundMedia, sentMediaOf } from './media-messages';
import { historyNotification, historySyncOf } from './history-sync';

/** WhatsApp sends six refs; Baileys shows the first for 60 s and each next one for 20 s. */
const PAIR_DEVICE_REFS = 6;
const FIRST_QR_MS = 60_000;
const NEXT_QR_MS = 20_000;
/** How long the server waits for the client's answer to its own IQs (pair-success, pair-device). */
const CLIENT_REPLY_MS = 10_000;
/** After a stream error the client closes; a client that does not is closed by the server. */
const CLOSE_GRACE_MS = 5_000;

type Phase = 'hello' | 'finish' | 'registering' | 'logging-in' | 'open' | 'closed';

export interface WaConnectionDeps {
  baileys: Baileys;
  server: CertifiedServer;
  network: SimNetwork;
  directory: WaDirectory;
  sessionId: string;
  ws: WebSocket;
  logger?: Logger;
}

export class WaWebConnection {
  private phase: Phase = 'hello';
  private readonly reader: FrameReader;
  private readonly handshake: NoiseServerHandshake;
  private transport: NoiseTransport | null = null;
  private registration: CompanionRegistration | null = null;
  /** frames are handled one at a time (decoding a node is async) */
  private queue: Promise<void> = Promise.resolve();
  private readonly waiters = new Map<string, (node: BinaryNode) => void>();
  private refs: string[] = [];
  private refsSentAt = 0;
  /** the adv secret the phone learned from the screen (QR) or from the code exchange, until `paired` */
  private advSecret: Buffer | null = null;
  private codeHello: (CompanionHello & { phoneNumber: string }) | null = null;
  private codeFinish: ((node: BinaryNode) => void) | null = null;
  private idSeq = 0;
  /** inbound messages are encrypted and sent one at a time, in the network's order */
  private outbound: Promise<void> = Promise.resolve();
  /** waMessageId → the network's event id, until the device's receipt */
  private readonly awaitingAck = new Map<string, string>();
  /** `<receipt id> <type>` → the network's event id, until the device's `<ack class="receipt">` */
  private readonly awaitingReceiptAck = new Map<string, string>();
  /** notification id → the network's event id and the notifications of that event not acked yet */
  private readonly awaitingNotificationAck = new Map<string, { eventId: string; open: Set<string> }>();
  /** waMessageId → what the device's receipt for it confirms besides the message (a sender key it took) */
  private readonly onTaken = new Map<string, () => void>();
  /** `<call>` stanza id → the network's event id, until the device's `<ack class="call">` */
  private readonly awaitingCallAck = new Map<string, string>();
  private readonly offline = new OfflineBatch();
  /** the history batches played to this device so far, and the chats the first one named (history-sync.ts) */
  private historyChunks = 0;
  private readonly historyChats = new Map<string, SimHistoryChat>();
  /** what contacts sent before the device uploaded its pre-keys (its first login): sent once it has */
  private readonly waitingForKeys: Array<() => void> = [];
  /** the `silent` fault: nothing is read or written on this socket any more, keepalive pings included */
  private silent = false;
  /** the device was told its one-time pre-keys run low, and has not uploaded since */
  private preKeysLowTold = false;
  /** the phone shared the account's app state sync key on this socket (once its pre-keys are there) */
  private keyShared = false;
  readonly link: DeviceLink & { showQr: () => string | null };

  constructor(private readonly deps: WaConnectionDeps) {
    this.reader = new FrameReader(deps.baileys.NOISE_WA_HEADER);
    this.handshake = new NoiseServerHandshake(deps.baileys, deps.server);
    this.link = {
      send: (frame) => this.fromNetwork(frame),
      close: (code) => this.closeFor(code),
      drop: () => this.deps.ws.terminate(),
      silence: () => void (this.silent = true),
      fault: (kind) => this.playFault(kind),
      showQr: () => this.currentQr(),
    };
    deps.ws.on('message', (data: Buffer) => this.onBytes(data));
    deps.ws.on('close', () => this.onClosed());
    deps.ws.on('error', (err) => deps.logger?.debug({ err, sessionId: deps.sessionId }, 'whatsapp web socket error'));
  }

  get sessionId(): string {
    return this.deps.sessionId;
  }

  /** Under the `silent` fault: the network's keepalive leaves the socket alone (keepalive.ts). */
  get silenced(): boolean {
    return this.silent;
  }

  /** The control API's scan: the phone read this QR from the screen; the ref must be one this socket shows. */
  acceptScan(scanned: { ref: string; noiseKey: Buffer; advSecret: Buffer }): void {
    if (this.phase !== 'registering' || !this.registration) throw new DomainError('conflict', 'the device is not showing a QR code', {});
    if (!this.refs.includes(scanned.ref)) throw new DomainError('conflict', 'this QR code has expired', {});
    if (!scanned.noiseKey.equals(this.registration.noiseKey)) throw new DomainError('conflict', 'this QR code belongs to another device', {});
    this.advSecret = scanned.advSecret;
  }

  /**
   * The control API's pair-code: the phone's user typed `code`. The phone answers the companion's hello with its own
   * wrapped key, waits for the companion's key bundle, and derives the adv secret; a wrong code fails there.
   * Resolves with the phone number the companion asked to link.
   */
  async acceptCode(code: string): Promise<string> {
    const hello = this.codeHello;
    const registration = this.registration;
    if (this.phase !== 'registering' || !hello || !registration) {
      throw new DomainError('conflict', 'the device has not requested a pairing code', {});
    }
    const { baileys, directory } = this.deps;
    const phone = directory.phone(hello.phoneNumber);
    const exchange = await enterCode(baileys, code, hello);
    const finished = new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => reject(new DomainError('conflict', 'the device did not finish the code exchange', {})), CLIENT_REPLY_MS);
      this.codeFinish = (node) => {
        clearTimeout(timer);
        resolve(node);
      };
    });
    this.send({
      tag: 'notification',
      attrs: { from: SERVER_JID, type: 'link_code_companion_reg', id: this.newId(), t: nowSeconds() },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [
            { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(hello.ref) },
            { tag: 'primary_identity_pub', attrs: {}, content: phone.accountKeyPair.public },
            { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: exchange.wrappedPrimaryEphemeral },
          ],
        },
      ],
    });
    const finish = await finished;
    const bundle = bufferOf(child(child(finish, 'link_code_companion_reg'), 'link_code_pairing_wrapped_key_bundle'));
    try {
      this.advSecret = finishCodeExchange(baileys, phone, exchange, bundle ?? Buffer.alloc(0), registration.identityKey);
    } catch {
      throw new DomainError('validation_error', 'does not match the pairing code', { code: 'does not match the pairing code' });
    }
    return hello.phoneNumber;
  }

  // ---- bytes and frames -------------------------------------------------------------------------

  private onBytes(data: Buffer): void {
    if (this.silent) return;
    let frames: Buffer[];
    try {
      frames = this.reader.push(Buffer.from(data));
    } catch (err) {
      this.fail(err);
      return;
    }
    for (const frame of frames) {
      this.queue = this.queue.then(() => this.onFrame(frame)).catch((err) => this.fail(err));
    }
  }

  private async onFrame(frame: Buffer): Promise<void> {
    if (this.phase === 'closed') return;
    if (this.phase === 'hello') {
      this.deps.ws.send(encodeFrame(this.handshake.hello(frame)));
      this.phase = 'finish';
      return;
    }
    if (this.phase === 'finish') {
      const result = this.handshake.finish(frame);
      this.transport = result.transport;
      this.onClientPayload(result);
      return;
    }
    const node = await this.deps.baileys.decodeBinaryNode(this.transport!.decrypt(frame));
    this.onNode(node);
  }

  private send(node: BinaryNode): void {
    if (!this.transport || this.silent || this.deps.ws.readyState !== WebSocket.OPEN) return;
    this.deps.ws.send(encodeFrame(this.transport.encrypt(this.deps.baileys.encodeBinaryNode(node))));
  }

  // ---- login and registration -------------------------------------------------------------------

  private onClientPayload({ clientStaticKey, clientPayload }: HandshakeResult): void {
    const { network, directory, sessionId } = this.deps;
    const pairing = clientPayload.devicePairingData;
    if (pairing && !clientPayload.passive) {
      if (!pairing.eIdent || !pairing.eRegid) throw new Error('registration without identity key or registration id');
      this.registration = directory.register({
        sessionId,
        noiseKey: clientStaticKey,
        identityKey: Buffer.from(pairing.eIdent),
        registrationId: Buffer.from(pairing.eRegid).readUInt32BE(0),
      });
      this.phase = 'registering';
      network.attach(sessionId, this.link, null);
      return;
    }
    const known = directory.byNoise(clientStaticKey);
    const username = String(clientPayload.username ?? '');
    if (!known?.credential || known.sessionId !== sessionId || known.credential.account.phoneNumber !== username) {
      // WhatsApp's answer to a device it does not know (or no longer knows): logged out
      this.sendFailure(401);
      return;
    }
    this.registration = known;
    this.phase = 'logging-in';
    network.attach(sessionId, this.link, known.credential);
  }

  /** What SimNetwork tells the device, as WhatsApp Web says it. */
  private fromNetwork(frame: SimNetworkFrame): void {
    if (frame.type === 'qr') return this.showRefs();
    if (frame.type === 'paired') return void this.completePairing(frame.credential).catch((err) => this.fail(err));
    if (frame.type === 'open') return this.loggedIn();
    if (frame.type === 'message') return this.deliverMessage(frame.eventId, frame.message);
    if (frame.type === 'receipt') return this.deliverReceipt(frame.eventId, frame.waMessageId, frame.chatJid, frame.status, frame.participant);
    if (frame.type === 'group-participants' || frame.type === 'group-update') return this.deliverGroupChange(frame.eventId, frame);
    if (frame.type === 'reaction') return this.deliverReaction(frame.eventId, frame);
    if (frame.type === 'poll-vote') return this.deliverPollVote(frame.eventId, frame);
    if (frame.type === 'presence') return this.deliverPresence(frame.eventId, frame);
    if (frame.type === 'call') return this.deliverCall(frame.eventId, frame);
    if (frame.type === 'edit' || frame.type === 'revoke') return this.deliverContactChange(frame.eventId, frame);
    if (frame.type === 'chat-update') return this.deliverAppStateChange(frame.eventId, frame.chats.map((chat) => ({ chat })));
    if (frame.type === 'label') return this.deliverAppStateChange(frame.eventId, [{ label: frame.change }]);
    if (frame.type === 'status') return this.deliverStatus(frame.eventId, frame.status);
    if (frame.type === 'history') return this.deliverHistory(frame.eventId, frame);
    // reactions and the rest reach a WhatsApp Web device with the next slices
    this.deps.logger?.debug({ sessionId: this.sessionId, type: frame.type }, 'network event not carried by the whatsapp web front door yet');
  }

  /** The network rotates QRs on its clock; Baileys rotates the refs it got on its own, so they are sent once. */
  private showRefs(): void {
    if (this.refs.length) return;
    this.refs = Array.from({ length: PAIR_DEVICE_REFS }, () => `2@${randomBytes(24).toString('base64')}`);
    this.refsSentAt = Date.now();
    this.send({
      tag: 'iq',
      attrs: { from: SERVER_JID, type: 'set', id: this.newId(), xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: this.refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
    });
  }

  /** The part of the QR Baileys shows now that the network knows (the adv secret is the companion's). */
  private currentQr(): string | null {
    if (!this.refs.length || !this.registration) return null;
    const elapsed = Date.now() - this.refsSentAt;
    const index = elapsed < FIRST_QR_MS ? 0 : 1 + Math.floor((elapsed - FIRST_QR_MS) / NEXT_QR_MS);
    const ref = this.refs[Math.min(index, this.refs.length - 1)];
    const { noiseKey, identityKey } = this.registration;
    return `https://wa.me/settings/linked_devices#${ref},${noiseKey.toString('base64')},${identityKey.toString('base64')}`;
  }

  /** SimNetwork paired the device: the phone sends the signed device identity, the companion signs back, then 515. */
  private async completePairing(credential: SimCredential): Promise<void> {
    const registration = this.registration;
    const advSecret = this.advSecret;
    if (!registration || !advSecret) throw new Error('paired without a scan or code exchange on this socket');
    const { baileys, directory } = this.deps;
    const { phoneNumber } = credential.account;
    const phone = directory.phone(phoneNumber);
    const deviceIndex = phone.nextDeviceIndex++;
    registration.credential = credential;
    registration.deviceIndex = deviceIndex;
    const id = this.newId();
    const reply = this.waitForReply(id);
    const linked = linkedDevice(baileys, phone, registration.identityKey, advSecret, deviceIndex, credential.account, this.deps.network.world.accountExtras.isBusiness(credential.account.jid));
    this.send({
      tag: 'iq',
      attrs: { from: SERVER_JID, type: 'set', id, xmlns: 'md', t: nowSeconds() },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            { tag: 'device-identity', attrs: { 'key-index': String(deviceIndex) }, content: linked.deviceIdentity },
            { tag: 'platform', attrs: { name: linked.platform } },
            { tag: 'device', attrs: { jid: linked.jid, lid: linked.lid } },
          ],
        },
      ],
    });
    const signed = bufferOf(child(child(await reply, 'pair-device-sign'), 'device-identity'));
    if (!signed || !verifyDeviceSignature(baileys, phone, registration.identityKey, signed)) {
      throw new Error('the companion did not sign its device identity');
    }
    // as WhatsApp does: the companion must reconnect and log in with its new identity
    this.streamError({ tag: 'stream:error', attrs: { code: '515' } });
  }

  private loggedIn(): void {
    const registration = this.registration!;
    const account = registration.credential!.account;
    this.phase = 'open';
    this.send({ tag: 'success', attrs: { t: nowSeconds(), lid: withDevice(account.lid, registration.deviceIndex!), location: 'sim', creation: nowSeconds() } });
    // SimNetwork hands over what it held right after `open`, synchronously: that is the offline batch, then the
    // marker (which also ends Baileys' initial event buffering)
    this.offline.begin();
    queueMicrotask(() => {
      this.offline.end();
      this.outbound = this.outbound.then(() => {
        const marker = this.offline.marker();
        this.send(marker);
        this.deps.logger?.info({ sessionId: this.sessionId, offline: Number(child(marker, 'offline')?.attrs.count) }, 'whatsapp web login: held stanzas delivered offline');
      });
      this.shareAppStateKey();
    });
  }

  // ---- app state (app-state.ts) -----------------------------------------------------------------

  private appStateDevice(): AppStateDevice | null {
    const account = this.registration?.credential?.account;
    if (this.phase !== 'open' || !account) return null;
    return { network: this.deps.network, sessionId: this.sessionId, link: this.link, account };
  }

  /**
   * After login the account's phone (device 0, a Signal party of the account's own number) shares the app state sync
   * key with the device (`appStateSyncKeyShare`), once the device has uploaded pre-keys; then the server tells it of
   * the collections that hold patches (`server_sync`), which the device resyncs.
   */
  private shareAppStateKey(): void {
    const registration = this.registration;
    const device = this.appStateDevice();
    if (this.keyShared || !device || !registration?.keyBundle) return;
    this.keyShared = true;
    const appState = appStateOf(this.deps.network, this.deps.baileys);
    const deviceIndex = registration.deviceIndex!;
    this.outbound = this.outbound
      .then(async () => {
        const { baileys } = this.deps;
        const phone = appState.phoneOf(device.account);
        const plaintext = baileys.encodeWAMessage(appState.keyShareMessage(device.account.phoneNumber, deviceIndex) as never);
        const enc = await phone.encryptFor(device.account.phoneNumber, deviceIndex, plaintext, () => registration.keyBundle);
        this.tellPreKeysLow();
        if (!enc) return;
        await appState.prepare(device);
        const id = newStanzaId();
        // once the device took the key (its receipt), it can read the collections the server tells it to resync
        this.onTaken.set(id, () => {
          const collections = appState.filled(this.sessionId);
          this.deps.logger?.debug({ sessionId: this.sessionId, collections }, 'app state key taken: server_sync');
          this.outbound = this.outbound.then(() => this.tellServerSync(collections));
        });
        this.send({
          tag: 'message',
          attrs: { from: device.account.jid, type: 'text', id, t: nowSeconds(), category: 'peer' },
          content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext }],
        });
      })
      .catch((err) => this.deps.logger?.warn({ err, sessionId: this.sessionId }, 'sharing the app state key failed'));
  }

  /** `<notification type="server_sync">`, one per collection (Baileys reads the first): the device resyncs it. */
  private tellServerSync(collections: AppStateCollectionName[], eventId?: string): void {
    const notifications = collections.map((name) => ({
      tag: 'notification',
      attrs: { from: SERVER_JID, type: 'server_sync', id: this.newId(), t: nowSeconds() },
      content: [{ tag: 'collection', attrs: { name, version: '0' } }],
    }));
    const open = new Set(notifications.map((n) => n.attrs.id));
    for (const notification of notifications) {
      if (eventId) this.awaitingNotificationAck.set(notification.attrs.id, { eventId, open });
      this.send(notification);
    }
    if (eventId && notifications.length === 0) this.deps.network.ack(this.sessionId, this.link, eventId);
  }

  /** A `w:sync:app:state` IQ: answered by the app state server once the patch is decoded and applied. */
  private onAppStateIq(iq: BinaryNode): void {
    const device = this.appStateDevice();
    const answered = device
      ? appStateOf(this.deps.network, this.deps.baileys)
          .answer(iq, device)
          .then(
            (content) => iqReply(iq, () => content),
            (err) => iqReply(iq, () => { throw err; }),
          )
      : Promise.resolve(iqReply(iq, () => { throw new IqError(401, 'not-authorized'); }));
    void answered.then((reply) => {
      const collections = children(child(iq, 'sync')).map((c) => `${c.attrs.name}@${c.attrs.version}${child(c, 'patch') ? '+patch' : ''}`);
      this.deps.logger?.debug({ sessionId: this.sessionId, collections, error: child(reply, 'error')?.attrs }, 'app state iq answered');
      this.send(reply);
    });
  }

  /**
   * The phone changed a chat (`POST /sim/sessions/{id}/chat`) or a label was changed elsewhere: the phone writes the
   * patch and the device is told to resync; the network forgets the event once the device acked the notifications.
   * The device's own upload coming back from the model is no news to it.
   */
  private deliverAppStateChange(eventId: string, changes: Array<{ chat: SimChatChange } | { label: LabelUpdatePayload }>): void {
    const device = this.appStateDevice();
    const appState = appStateOf(this.deps.network, this.deps.baileys);
    if (!device || appState.isOwnUpload(this.sessionId)) {
      if (device) this.deps.network.ack(this.sessionId, this.link, eventId);
      return;
    }
    void appState
      .phoneChange(device, changes)
      .then((collections) => (this.outbound = this.outbound.then(() => this.tellServerSync(collections, eventId))))
      .catch((err) => this.deps.logger?.warn({ err, sessionId: this.sessionId }, 'writing the phone\'s app state patch failed'));
  }

  // ---- what contacts send -----------------------------------------------------------------------

  /**
   * A contact's message (text, location, card or media, 1:1 or in a group), Signal-encrypted by the contact for this
   * device, in the order the network sent them. It stays pending on the network until the device's receipt. Kinds not
   * carried yet stay pending and are logged.
   */
  private deliverMessage(eventId: string, message: SimInboundMessage): void {
    const media = isInboundMedia(message);
    const quoted = this.quotedBy(message);
    const content = media ? null : contactContentOf(message, quoted);
    if ((!media && !content) || !message.from.endsWith('@s.whatsapp.net')) {
      this.deps.logger?.debug({ sessionId: this.sessionId, type: message.type, chatJid: message.chatJid }, 'inbound kind not carried by the whatsapp web front door yet');
      return;
    }
    const envelope = { id: message.id, from: message.from, chatJid: message.chatJid, type: content ? stanzaTypeOf(content) : 'media', t: Math.floor(message.timestamp / 1000) };
    // WhatsApp names the sender by its push name in the stanza's `notify` (Baileys' `pushName`)
    const notify: Record<string, string> = message.pushName ? { notify: message.pushName } : {};
    if (content) return this.sendFromContact(eventId, envelope, content, notify);
    // the contact's phone uploads the file (encrypted) to the media host, then sends the message naming it
    const { baileys, network } = this.deps;
    const host = mediaHostOf(network);
    if (!host) {
      this.deps.logger?.warn({ sessionId: this.sessionId }, 'the media host is not up: the media message waits');
      return;
    }
    const contextInfo = contextInfoOf(quoted, message.mentions);
    this.sendFromContact(eventId, envelope, () => inboundMediaMessage(baileys, host, message, network.mediaBytes(message.media!.mediaId).data, contextInfo), notify);
  }

  /**
   * The message a contact's message replies to, as its phone names it: one the device sent (its author the account,
   * its text copied), or else one of the contact's own (the network keeps no copy of those to quote).
   */
  private quotedBy(message: SimInboundMessage): QuotedMessage | null {
    if (!message.quotedWaMessageId) return null;
    const sent = this.deps.network.findSent(this.sessionId, message.quotedWaMessageId);
    if (sent) return { waMessageId: sent.id, author: sent.from, text: sent.text };
    return { waMessageId: message.quotedWaMessageId, author: message.from, text: null };
  }

  /**
   * A batch of the history the phone sends a newly linked device (history-sync.ts), sent by the phone itself (the
   * account's device 0, `category="peer"`) once the device is logged in; before that (the pairing socket) it waits on
   * the network, which hands it over again on login. The device's receipt takes it, and the network sends the next.
   */
  private deliverHistory(eventId: string, frame: Extract<SimNetworkFrame, { type: 'history' }>): void {
    const account = this.registration?.credential?.account;
    if (this.phase !== 'open' || !account) return;
    if (this.historyChunks === 0) for (const chat of frame.chats) this.historyChats.set(chat.jid, chat);
    const sync = historySyncOf(this.deps.baileys, frame, this.historyChats, this.historyChunks++);
    const envelope = { id: newStanzaId(), from: account.jid, chatJid: account.jid, type: 'text', t: Math.floor(Date.now() / 1000) };
    this.sendFromContact(eventId, envelope, historyNotification(this.deps.baileys, sync), { category: 'peer' });
  }

  /**
   * What a contact's phone sends the device, in the network's order: in a 1:1 chat one Signal message (`pkmsg` until
   * the device answered, then `msg`) `<message from=<contact>>`; in a group the message encrypted once with the
   * member's sender key (`skmsg`), preceded, until the device has taken it, by that sender key in a 1:1 Signal message
   * (`senderKeyDistributionMessage`): `<message from=<group> participant=<member>>`; Baileys decrypts both in order.
   * It stays pending on the network until the device's receipt for `id`.
   */
  private sendFromContact(eventId: string, envelope: ContactEnvelope, message: WaMessage | (() => Promise<WaMessage>), attrs: Record<string, string> = {}): void {
    const offline = this.offline.open;
    this.outbound = this.outbound
      .then(async () => {
        const content = typeof message === 'function' ? await message() : message;
        const registration = this.registration!;
        const { baileys, directory } = this.deps;
        const phoneNumber = registration.credential!.account.phoneNumber;
        const device = registration.deviceIndex!;
        const contact = directory.contact(envelope.from, this.lidOf);
        if (!contact) throw new Error(`not a contact jid: ${envelope.from}`);
        // a status goes out like a group message, with the contact's sender key for status@broadcast
        const group = isGroupJid(envelope.chatJid) || isStatusJid(envelope.chatJid) ? envelope.chatJid : null;
        const encs: BinaryNode[] = [];
        let pairwise: WaMessage | null = content;
        let skmsg: Buffer | null = null;
        if (group) {
          const { ciphertext, distribution } = await contact.encryptGroup(group, baileys.encodeWAMessage(content));
          skmsg = ciphertext;
          pairwise = contact.gaveKeyTo(group, phoneNumber, device)
            ? null
            : { senderKeyDistributionMessage: { groupId: group, axolotlSenderKeyDistributionMessage: distribution } };
        }
        if (pairwise) {
          const enc = await contact.encryptFor(phoneNumber, device, baileys.encodeWAMessage(pairwise), () => registration.keyBundle);
          this.tellPreKeysLow();
          if (!enc) {
            this.deps.logger?.info({ sessionId: this.sessionId }, 'the device has uploaded no pre-keys yet: the message waits for them');
            this.waitingForKeys.push(() => this.sendFromContact(eventId, envelope, content, attrs));
            return;
          }
          encs.push({ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext });
          if (group) this.onTaken.set(envelope.id, () => contact.keyTakenBy(group, phoneNumber, device));
        }
        if (skmsg) encs.push({ tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: skmsg });
        this.awaitingAck.set(envelope.id, eventId);
        const from: Record<string, string> = group ? { from: group, participant: contact.jid, participant_lid: contact.lid, addressing_mode: 'pn' } : { from: contact.jid };
        this.send({
          tag: 'message',
          attrs: { ...from, type: envelope.type, id: envelope.id, t: String(envelope.t), ...attrs, ...this.offline.stamp(offline) },
          content: encs,
        });
      })
      .catch((err) => this.deps.logger?.warn({ err, sessionId: this.sessionId }, 'encrypting an inbound message failed'));
  }

  /**
   * A contact reacts (`""`: removes its reaction): a `reactionMessage` whose key names the message as the contact's
   * phone sees it (fromMe: its own; otherwise the author), which Baileys turns to its own perspective.
   */
  private deliverReaction(eventId: string, event: Extract<SimNetworkFrame, { type: 'reaction' }>): void {
    const account = this.registration!.credential!.account;
    const sentByDevice = this.deps.network.listMessages(this.sessionId).some((m) => m.id === event.waMessageId);
    const group = isGroupJid(event.chatJid);
    const key = {
      id: event.waMessageId,
      remoteJid: group ? event.chatJid : account.jid,
      fromMe: !sentByDevice,
      ...(group && sentByDevice ? { participant: account.jid } : {}),
    };
    const envelope = { id: newStanzaId(), from: event.from, chatJid: event.chatJid, type: 'reaction', t: Math.floor(Date.now() / 1000) };
    this.sendFromContact(eventId, envelope, { reactionMessage: { key, text: event.emoji, senderTimestampMs: Date.now() } });
  }

  /** A contact votes: a `pollUpdateMessage` sealed with the poll's secret, as a phone seals it (contact-messages.ts). */
  private deliverPollVote(eventId: string, event: Extract<SimNetworkFrame, { type: 'poll-vote' }>): void {
    const account = this.registration!.credential!.account;
    const poll = this.deps.directory.polls.get(`${this.sessionId} ${event.pollWaMessageId}`);
    if (!poll) {
      this.deps.logger?.warn({ sessionId: this.sessionId, poll: event.pollWaMessageId }, 'a vote on a poll the front door did not see sent: the vote waits');
      return;
    }
    const group = isGroupJid(event.chatJid);
    const vote = sealPollVote(this.deps.baileys, { secret: poll.secret, pollId: event.pollWaMessageId, creatorJid: account.jid, voterJid: event.voter, options: event.selectedOptions });
    const key = { id: event.pollWaMessageId, remoteJid: group ? event.chatJid : account.jid, fromMe: false, ...(group ? { participant: account.jid } : {}) };
    const envelope = { id: newStanzaId(), from: event.voter, chatJid: event.chatJid, type: 'poll', t: Math.floor(Date.now() / 1000) };
    this.sendFromContact(eventId, envelope, { pollUpdateMessage: { pollCreationMessageKey: key, vote, senderTimestampMs: Date.now() } });
  }

  /**
   * A contact's presence: `<presence from type>` (available / unavailable) or `<chatstate from [participant]>`
   * (composing, recording, paused). Neither is acknowledged by the client, so the network forgets it once sent.
   */
  private deliverPresence(eventId: string, event: Extract<SimNetworkFrame, { type: 'presence' }>): void {
    this.outbound = this.outbound.then(() => {
      this.send(presenceStanza(event));
      this.deps.network.ack(this.sessionId, this.link, eventId);
    });
  }

  /**
   * A contact edits or deletes for everyone a message it sent the device: a protocolMessage (MESSAGE_EDIT inside
   * `editedMessage`, REVOKE) from the contact, naming the message from its phone's side (contact-messages.ts).
   */
  private deliverContactChange(eventId: string, event: Extract<SimNetworkFrame, { type: 'edit' | 'revoke' }>): void {
    const accountJid = this.registration!.credential!.account.jid;
    const from = event.type === 'edit' ? event.from : event.by;
    const envelope = { id: newStanzaId(), from, chatJid: event.chatJid, type: 'text', t: Math.floor(Date.now() / 1000) };
    this.sendFromContact(eventId, envelope, event.type === 'edit' ? contactEdit(event, accountJid) : contactRevoke(event, accountJid));
  }

  /**
   * A contact posted a status the account may see: `<message from="status@broadcast" participant=<contact>>`, sealed
   * with the contact's sender key for status@broadcast (statuses.ts). Kinds without media only, as 1:1 texts.
   */
  private deliverStatus(eventId: string, status: SimInboundStatus): void {
    const content = statusMessage(status);
    if (!content) {
      this.deps.logger?.debug({ sessionId: this.sessionId, type: status.type }, 'status kind not carried by the whatsapp web front door yet');
      return;
    }
    const envelope = { id: status.id, from: status.from, chatJid: STATUS_BROADCAST_JID, type: 'text', t: Math.floor(status.timestamp / 1000) };
    this.sendFromContact(eventId, envelope, content);
  }

  /** A contact calls: `<call from><offer call-id call-creator>`; the device's `<ack class="call">` takes it. */
  private deliverCall(eventId: string, event: Extract<SimNetworkFrame, { type: 'call' }>): void {
    const offline = this.offline.open;
    this.outbound = this.outbound.then(() => {
      const stanza = callOffer(this.newId(), event);
      this.awaitingCallAck.set(stanza.attrs.id, eventId);
      this.send({ ...stanza, attrs: { ...stanza.attrs, ...this.offline.stamp(offline) } });
    });
  }

  /**
   * A group changed on the network (the control API, or a member's IQ): `<notification type="w:gp2">`, one per change.
   * The network forgets the event once the device acked every one of them.
   */
  private deliverGroupChange(eventId: string, event: Extract<SimNetworkFrame, { type: 'group-participants' | 'group-update' }>): void {
    const offline = this.offline.open;
    this.outbound = this.outbound.then(() => {
      // the member who made the change; the control API's admin is named by no one (no author, as on the sim door)
      const notifications = groupNotifications(() => this.newId(), event, event.actor ?? null, this.lidOf);
      const open = new Set(notifications.map((n) => n.attrs.id));
      for (const notification of notifications) {
        this.awaitingNotificationAck.set(notification.attrs.id, { eventId, open });
        this.send({ ...notification, attrs: { ...notification.attrs, ...this.offline.stamp(offline) } });
      }
    });
  }

  /**
   * A contact's phone reports a message the device sent as delivered (no type), read or played: `<receipt from=<contact>
   * id=<waMessageId>>`, with no `recipient`, which Baileys reads as a receipt for its own message (`messages.update`).
   * It stays pending on the network until the device's `<ack class="receipt">`.
   */
  private deliverReceipt(eventId: string, waMessageId: string, chatJid: string, status: AckStatus, participant?: string): void {
    const offline = this.offline.open;
    const type = status === 'delivered' ? undefined : status;
    this.outbound = this.outbound.then(() => {
      this.awaitingReceiptAck.set(receiptKey(waMessageId, type, participant), eventId);
      const member: Record<string, string> = participant ? { participant } : {};
      this.send({ tag: 'receipt', attrs: { from: chatJid, ...member, id: waMessageId, t: nowSeconds(), ...(type ? { type } : {}), ...this.offline.stamp(offline) } });
    });
  }

  // ---- stanzas from the client ------------------------------------------------------------------

  private onNode(node: BinaryNode): void {
    if (node.tag === 'receipt') return this.onReceipt(node);
    if (node.tag === 'message') return this.onDeviceMessage(node);
    if (node.tag === 'ack') return this.onAck(node);
    if (node.tag === 'chatstate') return this.onChatState(node);
    if (node.tag === 'presence') return this.onPresence(node);
    if (node.tag === 'call') return this.onDeviceCall(node);
    if (node.tag !== 'iq') return; // ib telemetry: nothing to answer
    const { type, id, xmlns } = node.attrs;
    if (type === 'result' || type === 'error') {
      const waiter = this.waiters.get(id);
      this.waiters.delete(id);
      waiter?.(node);
      return;
    }
    const first = Array.isArray(node.content) ? (node.content[0] as BinaryNode | undefined) : undefined;
    if (xmlns === 'md' && first?.tag === 'remove-companion-device') return this.onLogout(node);
    if (xmlns === 'md' && first?.tag === 'link_code_companion_reg') return this.onCodeStage(node, first);
    if (!this.registration) return;
    if (xmlns === 'w:g2') return this.onGroupIq(node, answerGroupIq);
    if (xmlns === 'w:profile:picture' && isGroupJid(node.attrs.target)) return this.onGroupIq(node, answerGroupPictureIq);
    if (xmlns === 'w:sync:app:state') return this.onAppStateIq(node);
    const answer = answerIq(node, this.iqContext(this.registration));
    const key = iqKey(node);
    // the device's first pre-keys: the phone can now share the app state key with it
    if (key === 'encrypt set registration') {
      this.preKeysLowTold = false;
      this.shareAppStateKey();
    }
    if (answer.attrs.type === 'error') this.deps.logger?.debug({ sessionId: this.sessionId, iq: key }, 'whatsapp web iq answered with an error');
    this.send(answer);
    if (key === 'encrypt set registration' && this.registration.keyBundle) for (const retry of this.waitingForKeys.splice(0)) retry();
  }

  /** A contact took one of the device's one-time pre-keys: when few are left, the server says so once per upload. */
  private tellPreKeysLow(): void {
    if (this.preKeysLowTold) return;
    const notification = preKeyCountNotification(this.newId(), this.registration?.keyBundle ?? null);
    if (!notification) return;
    this.preKeysLowTold = true;
    this.send(notification);
  }

  private readonly lidOf = (phoneNumber: string) => this.deps.network.lidOf(phoneNumber);

  /** A group IQ (groups.ts), answered once the device is logged in. */
  private onGroupIq(iq: BinaryNode, answer: (iq: BinaryNode, ctx: GroupIqContext) => BinaryNode[] | undefined): void {
    const account = this.registration?.credential?.account;
    const reply = iqReply(iq, () => {
      if (this.phase !== 'open' || !account) throw new IqError(401, 'not-authorized');
      return answer(iq, { network: this.deps.network, sessionId: this.sessionId, link: this.link, account });
    });
    if (reply.attrs.type === 'error') this.deps.logger?.debug({ sessionId: this.sessionId, iq: iqKey(iq), reply: child(reply, 'error')?.attrs }, 'whatsapp web group iq answered with an error');
    this.send(reply);
  }

  private iqContext(device: CompanionRegistration): IqContext {
    const account = device.credential?.account;
    return {
      device,
      account: account ? { phoneNumber: account.phoneNumber, lidUser: account.lid.split('@')[0] } : null,
      contact: (jid) => this.deps.directory.contact(jid, this.lidOf),
      network: this.deps.network,
      sessionId: this.sessionId,
      link: this.link,
    };
  }

  /**
   * A message the device sends: each contact it is encrypted for decrypts its copy (Signal, as the contact's phone
   * would), and the network records it once per waMessageId (SimNetwork's `send`, what `GET /sim/messages` lists).
   * To a group: the per-device copies carry the device's sender key (each member takes it), and the one `skmsg` is
   * decrypted by every member holding that key. The server acks the stanza as WhatsApp does; a copy no contact can
   * read is logged, never recorded.
   */
  private onDeviceMessage(node: BinaryNode): void {
    this.outbound = this.outbound
      .then(async () => {
        const registration = this.registration;
        if (this.phase !== 'open' || !registration?.credential) return;
        const { baileys, directory } = this.deps;
        const sender = { user: registration.credential.account.phoneNumber, device: registration.deviceIndex! };
        const to = node.attrs.to ?? '';
        const copies = children(child(node, 'participants')).filter((c) => c.tag === 'to');
        const direct = children(node).filter((c) => c.tag === 'enc' && c.attrs.type !== 'skmsg');
        const pairwise = [...copies, ...direct.map((enc) => ({ tag: 'to', attrs: { jid: to }, content: [enc] }))];
        const texts: Array<{ contact: string; content: SentContent; context: SentContext }> = [];
        for (const copy of pairwise) {
          const contact = directory.contact(copy.attrs.jid ?? '', this.lidOf);
          const enc = child(copy, 'enc');
          const ciphertext = bufferOf(enc);
          if (!contact || !enc || !ciphertext) continue;
          const type = enc.attrs.type === 'pkmsg' ? 'pkmsg' : 'msg';
          const plaintext = await contact.decryptFrom(sender.user, sender.device, type, ciphertext);
          const message = baileys.proto.Message.decode(baileys.unpadRandomMax16(plaintext));
          const distribution = message.senderKeyDistributionMessage;
          if (distribution?.axolotlSenderKeyDistributionMessage && distribution.groupId === to) {
            await contact.receiveSenderKey(to, sender.user, sender.device, distribution.axolotlSenderKeyDistributionMessage);
          }
          const content = sentContentOf(message, to) ?? (await sentMediaOf(baileys, mediaHostOf(this.deps.network), message));
          if (content) texts.push({ contact: contact.jid, content, context: sentContextOf(message) });
        }
        const skmsg = bufferOf(children(node).find((c) => c.tag === 'enc' && c.attrs.type === 'skmsg'));
        const own = registration.credential.account.jid;
        // a group's members read the skmsg; a status's audience (statuses.ts) is the contacts it was sent to
        const readers = isGroupJid(to) ? (findGroup(this.deps.network, to)?.participants ?? []) : isStatusJid(to) ? statusAudience(copies, (jid) => directory.contact(jid, this.lidOf)) : [];
        if (skmsg && readers.length) {
          for (const member of readers) {
            const contact = member === own ? null : directory.contact(member, this.lidOf);
            if (!contact?.hasSenderKeyOf(to, sender.user, sender.device)) continue;
            const message = baileys.proto.Message.decode(baileys.unpadRandomMax16(await contact.decryptGroup(to, sender.user, sender.device, skmsg)));
            const content = sentContentOf(message, to) ?? (await sentMediaOf(baileys, mediaHostOf(this.deps.network), message));
            if (content) texts.push({ contact: member, content, context: sentContextOf(message) });
          }
        }
        if (texts.length === 0) {
          this.deps.logger?.debug({ sessionId: this.sessionId, to }, 'outbound kind not carried by the whatsapp web front door yet, or no member could read it');
          return;
        }
        this.deps.logger?.debug({ sessionId: this.sessionId, to, readBy: texts.map((t) => t.contact) }, 'whatsapp web message decrypted by its recipients');
        const recipient = isGroupJid(to) || isStatusJid(to) ? to : texts[0].contact;
        const account = { jid: registration.credential.account.jid, lid: registration.credential.account.lid };
        // a status is recorded with the audience that read it (the network's statusPosted)
        const audience = isStatusJid(to) ? [...new Set(texts.map((t) => t.contact))] : null;
        recordDeviceMessage({ baileys, network: this.deps.network, directory, sessionId: this.sessionId, link: this.link, account }, node.attrs.id, recipient, texts[0].content, texts[0].context, audience);
      })
      .catch((err) => this.deps.logger?.warn({ err, sessionId: this.sessionId }, 'reading a device message failed'))
      .then(() => this.send({ tag: 'ack', attrs: { id: node.attrs.id, class: 'message', from: node.attrs.to, t: nowSeconds() } }));
  }

  /**
   * The device's receipt for messages it took (delivery, `inactive`, `read`, …; one id, or more in `<list>`): its
   * acknowledgement, so the network forgets them. A nack (`<ack error>`) is not one: the message stays pending.
   */
  private onReceipt(receipt: BinaryNode): void {
    this.send({ tag: 'ack', attrs: { id: receipt.attrs.id, class: 'receipt', from: receipt.attrs.to ?? SERVER_JID } });
    const ids = [receipt.attrs.id, ...children(child(receipt, 'list')).map((item) => item.attrs.id)];
    if (receipt.attrs.type === 'read' && receipt.attrs.to && this.phase === 'open') {
      // the device read what a contact sent: the network's presence log (the blue ticks the contact's phone shows)
      const keys = ids.filter(Boolean).map((waMessageId) => ({ chatJid: receipt.attrs.to, waMessageId, fromMe: false, participant: receipt.attrs.participant ?? null }));
      try {
        this.deps.network.request(this.sessionId, this.link, 'read', { keys });
      } catch (err) {
        this.deps.logger?.debug({ err, sessionId: this.sessionId }, 'a read receipt the network did not take');
      }
    }
    for (const id of ids) {
      if (id && receipt.attrs.type !== 'retry') {
        this.onTaken.get(id)?.();
        this.onTaken.delete(id);
      }
      const eventId = id ? this.awaitingAck.get(id) : undefined;
      if (!eventId) continue;
      this.awaitingAck.delete(id);
      this.deps.network.ack(this.sessionId, this.link, eventId);
    }
  }

  /** The device's ack of a receipt the network sent (a nack, `error=…`, is not one: the receipt stays pending). */
  private onAck(ack: BinaryNode): void {
    if (ack.attrs.class === 'notification' && !ack.attrs.error) return this.onNotificationAck(ack.attrs.id);
    if (ack.attrs.class === 'call' && !ack.attrs.error) {
      const eventId = this.awaitingCallAck.get(ack.attrs.id);
      this.awaitingCallAck.delete(ack.attrs.id);
      if (eventId) this.deps.network.ack(this.sessionId, this.link, eventId);
      return;
    }
    if (ack.attrs.class !== 'receipt' || ack.attrs.error) return;
    const key = receiptKey(ack.attrs.id, ack.attrs.type, ack.attrs.participant);
    const eventId = this.awaitingReceiptAck.get(key);
    if (!eventId) return;
    this.awaitingReceiptAck.delete(key);
    this.deps.network.ack(this.sessionId, this.link, eventId);
  }

  /**
   * The device's own call stanza: a rejection (Baileys' `rejectCall`) is the network's `calls.reject` (a call not
   * placed to it 404, no longer ringing 409); the server acks it, with the refusal as an error, and then ends the call
   * (`terminate`). Other call stanzas (accepting, calling out) are not played: answered 501.
   */
  private onDeviceCall(node: BinaryNode): void {
    const reject = deviceCallReject(node);
    let error: IqError | null = reject ? null : new IqError(501, 'feature-not-implemented');
    if (reject) {
      try {
        if (this.phase !== 'open') throw new IqError(401, 'not-authorized');
        act({ network: this.deps.network, sessionId: this.sessionId, link: this.link }, 'calls.reject', { callId: reject.callId });
      } catch (err) {
        error = err instanceof IqError ? err : new IqError(500, 'internal-server-error');
      }
    }
    this.send(callStanzaAck(node, error));
    if (reject && !error) this.send(callTerminate(this.newId(), reject));
  }

  /** The device shows it is typing, recording or stopped in a chat: the network's presence log (what its contacts would see). */
  private onChatState(node: BinaryNode): void {
    const state = deviceChatState(node);
    if (state) this.presenceAction('presence.chat', state);
  }

  /**
   * The device's `<presence>`: the account online / offline (logged, told to whoever subscribed to it), or a
   * subscription to a contact's presence (logged; the network answers with the contact's current presence).
   */
  private onPresence(node: BinaryNode): void {
    const request = devicePresenceRequest(node);
    if (request?.kind === 'account') this.presenceAction('presence.account', { presence: request.presence });
    if (request?.kind === 'subscribe') this.presenceAction('presence.subscribe', { jid: request.jid });
  }

  /** One of the network's presence actions for this device; what it refuses (an unknown contact) is only logged, as WhatsApp answers nothing. */
  private presenceAction(action: string, args: Record<string, unknown>): void {
    if (this.phase !== 'open') return;
    try {
      this.deps.network.request(this.sessionId, this.link, 'action', { action, args });
    } catch (err) {
      this.deps.logger?.debug({ err, sessionId: this.sessionId, action }, 'a presence the network did not take');
    }
  }

  private onNotificationAck(id: string | undefined): void {
    const waiting = id ? this.awaitingNotificationAck.get(id) : undefined;
    if (!id || !waiting) return;
    this.awaitingNotificationAck.delete(id);
    waiting.open.delete(id);
    if (waiting.open.size === 0) this.deps.network.ack(this.sessionId, this.link, waiting.eventId);
  }

  private onLogout(iq: BinaryNode): void {
    this.send({ tag: 'iq', attrs: { id: iq.attrs.id, from: SERVER_JID, type: 'result' } });
    if (this.phase !== 'open') return;
    // the phone forgets the device; SimNetwork closes this link as logged out
    setImmediate(() => this.deps.network.unlink(this.sessionId));
  }

  private onCodeStage(iq: BinaryNode, reg: BinaryNode): void {
    if (reg.attrs.stage === 'companion_hello') {
      const wrapped = bufferOf(child(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub'));
      const phoneNumber = (reg.attrs.jid ?? '').split('@')[0];
      if (!wrapped || wrapped.length < 80 || !/^\d{6,15}$/.test(phoneNumber)) {
        this.send({ tag: 'iq', attrs: { id: iq.attrs.id, from: SERVER_JID, type: 'error' }, content: [{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }] });
        return;
      }
      const ref = `2@${randomBytes(24).toString('base64')}`;
      this.codeHello = { ref, wrappedCompanionEphemeral: wrapped, phoneNumber };
      this.send({
        tag: 'iq',
        attrs: { id: iq.attrs.id, from: SERVER_JID, type: 'result' },
        content: [{ tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }] }],
      });
      return;
    }
    this.send({ tag: 'iq', attrs: { id: iq.attrs.id, from: SERVER_JID, type: 'result' } });
    if (reg.attrs.stage === 'companion_finish') this.codeFinish?.(iq);
  }

  // ---- closing ----------------------------------------------------------------------------------

  /** SimNetwork closes the device: WhatsApp's stanza for that reason (faults.ts), then the client ends the socket. */
  private closeFor(code: number): void {
    this.streamError(closeStanza(code, this.phase !== 'logging-in'));
  }

  private sendFailure(reason: number): void {
    this.streamError({ tag: 'failure', attrs: { reason: String(reason), location: 'sim' } });
  }

  /** A fault of the control API, as WhatsApp Web plays it (faults.ts). */
  private playFault(kind: SimFaultKind): void {
    const action = WA_FAULTS[kind];
    if ('stanza' in action) return this.streamError(action.stanza);
    if ('silence' in action) return void (this.silent = true);
    this.deps.ws.terminate();
  }

  private streamError(node: BinaryNode): void {
    this.send(node);
    this.phase = 'closed';
    // the client closes on a stream error; one that does not is closed for it
    setTimeout(() => this.deps.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  private fail(err: unknown): void {
    if (this.phase === 'closed') return;
    this.deps.logger?.warn({ err, sessionId: this.sessionId }, 'whatsapp web connection failed');
    this.phase = 'closed';
    this.deps.ws.terminate();
  }

  private onClosed(): void {
    this.phase = 'closed';
    for (const waiter of this.waiters.values()) waiter({ tag: 'iq', attrs: { type: 'error' } });
    this.waiters.clear();
    this.deps.network.detach(this.sessionId, this.link);
  }

  private waitForReply(id: string): Promise<BinaryNode> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        reject(new Error(`no reply to ${id}`));
      }, CLIENT_REPLY_MS);
      this.waiters.set(id, (node) => {
        clearTimeout(timer);
        resolve(node);
      });
    });
  }

  private newId(): string {
    this.idSeq += 1;
    return `sim-${this.idSeq}`;
  }
}

function receiptKey(id: string | undefined, type: string | undefined, participant?: string): string {
  return `${id ?? ''} ${type ?? ''} ${participant ?? ''}`;
}


function bufferOf(node: BinaryNode | undefined): Buffer | undefined {
  const content = node?.content;
  if (content instanceof Uint8Array) return Buffer.from(content);
  if (typeof content === 'string') return Buffer.from(content, 'utf8');
  return undefined;
}
