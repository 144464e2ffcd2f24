/**
 * The emulated phone's side of linking a companion device: the ADV signed device identity it sends in `pair-success`
 * (account-signed device details, HMAC'd with the adv secret the phone read from the QR or derived in the code flow),
 * the check of the companion's counter-signature, and the phone's half of the pairing-code key exchange. Mirrors
 * Baileys' Utils/validate-connection.js (configureSuccessfulPairing) and the `link_code_companion_reg` handling of
 * Socket/messages-recv.js.
 */
import type { SimAccount } from '@app/contracts';
import { randomBytes, randomInt } from 'node:crypto';
import { EmulatedPhone } from './directory';
import { Baileys, KeyPair, newKeyPair, verifySignature } from './wa-kit';

const ADV_ACCOUNT_SIG_PREFIX = Buffer.from([6, 0]);
const ADV_DEVICE_SIG_PREFIX = Buffer.from([6, 1]);

/** What Baileys shows as QR: `https://wa.me/settings/linked_devices#ref,noiseKey,identityKey,advSecret,platform`. */
export interface ScannedQr {
  ref: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  advSecret: Buffer;
}

export function parseQr(qr: string): ScannedQr | null {
  const data = qr.includes('#') ? qr.slice(qr.indexOf('#') + 1) : qr;
  const [ref, noise, identity, adv] = data.split(',');
  if (!ref || !noise || !identity || !adv) return null;
  const noiseKey = Buffer.from(noise, 'base64');
  const identityKey = Buffer.from(identity, 'base64');
  const advSecret = Buffer.from(adv, 'base64');
  if (noiseKey.length !== 32 || identityKey.length !== 32 || advSecret.length !== 32) return null;
  return { ref, noiseKey, identityKey, advSecret };
}

/** The `device-identity` content of `pair-success`: ADVSignedDeviceIdentityHMAC, as the phone signs a new device. */
export function signDeviceIdentity(
  baileys: Baileys,
  phone: EmulatedPhone,
  companionIdentityKey: Buffer,
  advSecret: Buffer,
  keyIndex: number,
): Uint8Array {
  const { proto, Curve, hmacSign } = baileys;
  const deviceDetails = proto.ADVDeviceIdentity.encode({ rawId: randomInt(1, 2 ** 31), timestamp: Math.floor(Date.now() / 1000), keyIndex }).finish();
  const accountSignature = Curve.sign(phone.accountKeyPair.private, Buffer.concat([ADV_ACCOUNT_SIG_PREFIX, deviceDetails, companionIdentityKey]));
  const details = proto.ADVSignedDeviceIdentity.encode({
    details: deviceDetails,
    accountSignatureKey: phone.accountKeyPair.public,
    accountSignature: Buffer.from(accountSignature),
  }).finish();
  return proto.ADVSignedDeviceIdentityHMAC.encode({ details, hmac: hmacSign(Buffer.from(details), advSecret) }).finish();
}

/** `123@lid` → `123:4@lid` (the account's lid on one of its devices). */
export function withDevice(jid: string, device: number): string {
  const [user, server] = jid.split('@');
  return `${user}:${device}@${server}`;
}

/** What `pair-success` tells a companion the phone just linked: its signed identity, the phone's platform, its jids. */
export function linkedDevice(
  baileys: Baileys,
  phone: EmulatedPhone,
  companionIdentityKey: Buffer,
  advSecret: Buffer,
  deviceIndex: number,
  account: SimAccount,
  business: boolean,
): { deviceIdentity: Uint8Array; platform: 'smba' | 'android'; jid: string; lid: string } {
  return {
    deviceIdentity: signDeviceIdentity(baileys, phone, companionIdentityKey, advSecret, deviceIndex),
    // WhatsApp Business's Android app (`smba`) for a business account: what Baileys reads as isBusiness
    platform: business ? 'smba' : 'android',
    jid: `${account.phoneNumber}:${deviceIndex}@s.whatsapp.net`,
    lid: withDevice(account.lid, deviceIndex),
  };
}

/** Checks the companion's `pair-device-sign`: its device signature over the details the phone signed. */
export function verifyDeviceSignature(baileys: Baileys, phone: EmulatedPhone, companionIdentityKey: Buffer, signed: Uint8Array): boolean {
  const account = baileys.proto.ADVSignedDeviceIdentity.decode(signed);
  if (!account.details || !account.deviceSignature) return false;
  const message = Buffer.concat([ADV_DEVICE_SIG_PREFIX, account.details, companionIdentityKey, phone.accountKeyPair.public]);
  return verifySignature(companionIdentityKey, message, account.deviceSignature);
}

/** The companion's `companion_hello`: its ephemeral key, wrapped with a key derived from the code it shows. */
export interface CompanionHello {
  ref: string;
  wrappedCompanionEphemeral: Buffer;
}

/** What the phone sends once its user typed the code: the notification content, and what it keeps for the finish. */
export interface PhoneCodeExchange {
  primaryEphemeral: KeyPair;
  companionEphemeral: Buffer;
  wrappedPrimaryEphemeral: Buffer;
}

async function wrapWithCode(baileys: Baileys, code: string, key: Buffer): Promise<Buffer> {
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const derived = await baileys.derivePairingCodeKey(code, salt);
  return Buffer.concat([salt, iv, baileys.aesEncryptCTR(key, derived, iv)]);
}

async function unwrapWithCode(baileys: Baileys, code: string, wrapped: Buffer): Promise<Buffer> {
  const derived = await baileys.derivePairingCodeKey(code, wrapped.subarray(0, 32));
  return baileys.aesDecryptCTR(wrapped.subarray(48, 80), derived, wrapped.subarray(32, 48));
}

/** The phone's user typed `code`: unwrap the companion's ephemeral key and wrap the phone's own with the same code. */
export async function enterCode(baileys: Baileys, code: string, hello: CompanionHello): Promise<PhoneCodeExchange> {
  const primaryEphemeral = newKeyPair(baileys);
  const companionEphemeral = await unwrapWithCode(baileys, code, hello.wrappedCompanionEphemeral);
  return { primaryEphemeral, companionEphemeral, wrappedPrimaryEphemeral: await wrapWithCode(baileys, code, primaryEphemeral.public) };
}

/**
 * The companion's `companion_finish`: the key bundle it wrapped with the shared ephemeral secret. A wrong code shows
 * here (the phone unwrapped a different key, so the bundle does not decrypt). Returns the adv secret both sides derive.
 */
export function finishCodeExchange(
  baileys: Baileys,
  phone: EmulatedPhone,
  exchange: PhoneCodeExchange,
  wrappedKeyBundle: Buffer,
  companionIdentityKey: Buffer,
): Buffer {
  const { Curve, hkdf, aesDecryptGCM } = baileys;
  const companionShared = Curve.sharedKey(exchange.primaryEphemeral.private, exchange.companionEphemeral);
  const key = hkdf(companionShared, 32, { salt: wrappedKeyBundle.subarray(0, 32), info: 'link_code_pairing_key_bundle_encryption_key' });
  const bundle = aesDecryptGCM(wrappedKeyBundle.subarray(44), Buffer.from(key), wrappedKeyBundle.subarray(32, 44), Buffer.alloc(0));
  if (!bundle.subarray(0, 32).equals(companionIdentityKey) || !bundle.subarray(32, 64).equals(phone.accountKeyPair.public)) {
    throw new Error('the key bundle names other identities');
  }
  const random = bundle.subarray(64, 96);
  const identityShared = Curve.sharedKey(phone.accountKeyPair.private, companionIdentityKey);
  return Buffer.from(hkdf(Buffer.concat([companionShared, identityShared, random]), 32, { info: 'adv_secret' }));
}
