/**
 * Linking a companion on one WhatsApp Web socket, as WhatsApp plays it: the client payload says registration (a new
 * companion) or login (a known one); a registering companion gets `pair-device` refs it shows as QR, or asks for a
 * pairing code (`link_code_companion_reg` stages); the phone scans or types the code (the control API), SimNetwork
 * pairs, and the phone's `pair-success` carries the signed device identity, which the companion signs back before the
 * 515 restart. The unlink (`remove-companion-device`) ends it. Pairing state, jid and lid stay in SimNetwork.
 */
import { DomainError, SimCredential } from '@app/contracts';
import { randomBytes } from 'node:crypto';
import type { CompanionRegistration } from './directory';
import { bufferOf, child, IqError } from './iq';
import type { HandshakeResult } from './noise-server';
import { CompanionHello, enterCode, finishCodeExchange, linkedDevice, verifyDeviceSignature } from './phone';
import type { PairingSteps, WaConnectionDeps, WaSocket } from './wa-socket';
import { BinaryNode, nowSeconds, SERVER_JID } from './wa-kit';

/** WhatsApp sends six refs; Baileys shows the first for 60 s and each next one for 20 s. */
const PAIR_DEVICE_REFS = 6;
const FIRST_QR_MS = 60_000;
const NEXT_QR_MS = 20_000;
/** How long the server waits for the client's answer to its own IQs (pair-success, pair-device). */
const CLIENT_REPLY_MS = 10_000;

/**
 * Who the client payload says the companion is: a new one registering (its keys recorded for this session), a known
 * one logging in with the credential SimNetwork issued it, or one WhatsApp does not know (any more): logged out (401).
 */
export function companionOf(deps: WaConnectionDeps, { clientStaticKey, clientPayload }: HandshakeResult): { phase: 'registering' | 'logging-in'; registration: CompanionRegistration } | null {
  const { directory, sessionId } = deps;
  const pairing = clientPayload.devicePairingData;
  if (pairing && !clientPayload.passive) {
    if (!pairing.eIdent || !pairing.eRegid) throw new Error('registration without identity key or registration id');
    const registration = directory.register({
      sessionId,
      noiseKey: clientStaticKey,
      identityKey: Buffer.from(pairing.eIdent),
      registrationId: Buffer.from(pairing.eRegid).readUInt32BE(0),
    });
    return { phase: 'registering', registration };
  }
  const known = directory.byNoise(clientStaticKey);
  const username = String(clientPayload.username ?? '');
  if (!known?.credential || known.sessionId !== sessionId || known.credential.account.phoneNumber !== username) return null;
  return { phase: 'logging-in', registration: known };
}

export class CompanionPairing implements PairingSteps {
  private refs: string[] = [];
  private refsSentAt = 0;
  /** the adv secret the phone learned from the screen (QR) or from the code exchange, until `paired` */
  private advSecret: Buffer | null = null;
  private codeHello: (CompanionHello & { phoneNumber: string }) | null = null;
  private codeFinish: ((node: BinaryNode) => void) | null = null;
  /** the server's own IQs waiting for the client's answer, by id */
  private readonly waiters = new Map<string, (node: BinaryNode) => void>();

  constructor(private readonly socket: WaSocket) {}

  /** The network rotates QRs on its clock; Baileys rotates the refs it got on its own, so they are sent once. */
  showRefs(): void {
    if (this.refs.length) return;
    this.refs = Array.from({ length: PAIR_DEVICE_REFS }, () => `2@${randomBytes(24).toString('base64')}`);
    this.refsSentAt = Date.now();
    this.socket.send({
      tag: 'iq',
      attrs: { from: SERVER_JID, type: 'set', id: this.socket.newId(), xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: this.refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
    });
  }

  /** The part of the QR Baileys shows now that the network knows (the adv secret is the companion's). */
  currentQr(): string | null {
    const registration = this.socket.registration;
    if (!this.refs.length || !registration) return null;
    const elapsed = Date.now() - this.refsSentAt;
    const index = elapsed < FIRST_QR_MS ? 0 : 1 + Math.floor((elapsed - FIRST_QR_MS) / NEXT_QR_MS);
    const ref = this.refs[Math.min(index, this.refs.length - 1)];
    const { noiseKey, identityKey } = registration;
    return `https://wa.me/settings/linked_devices#${ref},${noiseKey.toString('base64')},${identityKey.toString('base64')}`;
  }

  /** The control API's scan: the phone read this QR from the screen; the ref must be one this socket shows. */
  acceptScan(scanned: { ref: string; noiseKey: Buffer; advSecret: Buffer }): void {
    const registration = this.socket.registration;
    if (this.socket.phase !== 'registering' || !registration) throw new DomainError('conflict', 'the device is not showing a QR code', {});
    if (!this.refs.includes(scanned.ref)) throw new DomainError('conflict', 'this QR code has expired', {});
    if (!scanned.noiseKey.equals(registration.noiseKey)) throw new DomainError('conflict', 'this QR code belongs to another device', {});
    this.advSecret = scanned.advSecret;
  }

  /**
   * The control API's pair-code: the phone's user typed `code`. The phone answers the companion's hello with its own
   * wrapped key, waits for the companion's key bundle, and derives the adv secret; a wrong code fails there.
   * Resolves with the phone number the companion asked to link.
   */
  async acceptCode(code: string): Promise<string> {
    const hello = this.codeHello;
    const registration = this.socket.registration;
    if (this.socket.phase !== 'registering' || !hello || !registration) {
      throw new DomainError('conflict', 'the device has not requested a pairing code', {});
    }
    const { baileys, directory } = this.socket.deps;
    const phone = directory.phone(hello.phoneNumber);
    const exchange = await enterCode(baileys, code, hello);
    const finished = new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => reject(new DomainError('conflict', 'the device did not finish the code exchange', {})), CLIENT_REPLY_MS);
      this.codeFinish = (node) => {
        clearTimeout(timer);
        resolve(node);
      };
    });
    this.socket.send({
      tag: 'notification',
      attrs: { from: SERVER_JID, type: 'link_code_companion_reg', id: this.socket.newId(), t: nowSeconds() },
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
    const bundle = bufferOf(child(child(await finished, 'link_code_companion_reg'), 'link_code_pairing_wrapped_key_bundle'));
    try {
      this.advSecret = finishCodeExchange(baileys, phone, exchange, bundle ?? Buffer.alloc(0), registration.identityKey);
    } catch {
      throw new DomainError('validation_error', 'does not match the pairing code', { code: 'does not match the pairing code' });
    }
    return hello.phoneNumber;
  }

  /** SimNetwork paired the device: the phone sends the signed device identity, the companion signs back, then 515. */
  async completePairing(credential: SimCredential): Promise<void> {
    const registration = this.socket.registration;
    const advSecret = this.advSecret;
    if (!registration || !advSecret) throw new Error('paired without a scan or code exchange on this socket');
    const { baileys, directory, network } = this.socket.deps;
    const phone = directory.phone(credential.account.phoneNumber);
    const deviceIndex = phone.nextDeviceIndex++;
    registration.credential = credential;
    registration.deviceIndex = deviceIndex;
    const id = this.socket.newId();
    const reply = this.waitForReply(id);
    const linked = linkedDevice(baileys, phone, registration.identityKey, advSecret, deviceIndex, credential.account, network.world.accountExtras.isBusiness(credential.account.jid));
    this.socket.send({
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
    this.socket.streamError({ tag: 'stream:error', attrs: { code: '515' } });
  }

  /** The `md` IQs: the unlink, and the stages of the code flow; any other is not played (501). */
  answerMd(iq: BinaryNode): BinaryNode[] | undefined {
    const first = Array.isArray(iq.content) ? (iq.content[0] as BinaryNode | undefined) : undefined;
    if (first?.tag === 'remove-companion-device') return this.unlink();
    if (first?.tag === 'link_code_companion_reg') return this.codeStage(iq, first);
    throw new IqError(501, 'feature-not-implemented');
  }

  /** The device's answer (`result` or `error`) to one of the server's own IQs. */
  replied(node: BinaryNode): void {
    const waiter = this.waiters.get(node.attrs.id);
    this.waiters.delete(node.attrs.id);
    waiter?.(node);
  }

  /** The socket closed: whoever waits for the client's answer gets an error. */
  closed(): void {
    for (const waiter of this.waiters.values()) waiter({ tag: 'iq', attrs: { type: 'error' } });
    this.waiters.clear();
  }

  /** The device logs itself out: the phone forgets it, and SimNetwork closes this link as logged out. */
  private unlink(): undefined {
    if (this.socket.phase === 'open') setImmediate(() => this.socket.deps.network.unlink(this.socket.sessionId));
    return undefined;
  }

  /** `companion_hello` (the companion's wrapped key and the number it links): the ref; `companion_finish`: the bundle. */
  private codeStage(iq: BinaryNode, reg: BinaryNode): BinaryNode[] | undefined {
    if (reg.attrs.stage === 'companion_hello') {
      const wrapped = bufferOf(child(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub'));
      const phoneNumber = (reg.attrs.jid ?? '').split('@')[0];
      if (!wrapped || wrapped.length < 80 || !/^\d{6,15}$/.test(phoneNumber)) throw new IqError(400, 'bad-request');
      const ref = `2@${randomBytes(24).toString('base64')}`;
      this.codeHello = { ref, wrappedCompanionEphemeral: wrapped, phoneNumber };
      return [{ tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }] }];
    }
    // acceptCode goes on (it awaits this) once the result is out
    if (reg.attrs.stage === 'companion_finish') this.codeFinish?.(iq);
    return undefined;
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
}
