/**
 * Benchmarks only (`SIM_TEST_PRELINK`, refused with NODE_ENV=production): `POST /sim/whatsapp-web/devices` links a
 * WhatsApp Web companion whose keys the caller generated, without a socket or a QR, as if its phone had scanned one
 * earlier and the device had uploaded its first pre-keys. The answer is what `pair-success` would have told the
 * companion; the caller runs Baileys' own `configureSuccessfulPairing` on it, stores the creds, and the device then
 * logs in like any paired one (noise key known, credential issued, key bundle on the server). A QR pairing makes the
 * gateway generate and upload 812 pre-keys, the dearest thing a session does; a density bench measures it once, on
 * the sessions it pairs through the screen, and links the rest here.
 */
import { DomainError } from '@app/contracts';
import { validation } from '../sim-input';
import type { SimNetwork } from '../sim-network';
import type { WaDirectory } from './directory';
import { linkedDevice } from './phone';
import type { DeviceKeyBundle } from './signal-party';
import type { Baileys } from './wa-kit';

export interface PrelinkedDevice {
  sessionId: string;
  /** base64 ADVSignedDeviceIdentityHMAC: `pair-success`'s `device-identity`, keyed by the caller's adv secret */
  deviceIdentity: string;
  deviceIndex: number;
  platform: string;
  jid: string;
  lid: string;
}

const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
/** one-time pre-keys a prelinked device may bring (WhatsApp's first upload is 812) */
const MAX_PRE_KEYS = 1000;

function key32(field: string, value: unknown): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0);
  if (bytes.length !== 32) throw validation(field, 'must be 32 bytes in base64');
  return bytes;
}

function keyId(field: string, value: unknown, min = 1): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > 0xffffff) throw validation(field, `must be an integer ${min}..16777215`);
  return value as number;
}

export function prelinkDevice(network: SimNetwork, directory: WaDirectory, baileys: Baileys, body: Record<string, unknown>): PrelinkedDevice {
  const sessionId = body.sessionId;
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) throw validation('sessionId', 'must be a session id');
  if (typeof body.phoneNumber !== 'string') throw validation('phoneNumber', 'is required');
  const noiseKey = key32('noiseKey', body.noiseKey);
  const identityKey = key32('identityKey', body.identityKey);
  const advSecret = key32('advSecret', body.advSecret);
  const registrationId = keyId('registrationId', body.registrationId, 0);
  const signed = (body.signedPreKey ?? {}) as Record<string, unknown>;
  const signature = typeof signed.signature === 'string' ? Buffer.from(signed.signature, 'base64') : Buffer.alloc(0);
  if (signature.length !== 64) throw validation('signedPreKey.signature', 'must be 64 bytes in base64');
  const signedPreKey = { keyId: keyId('signedPreKey.keyId', signed.keyId), publicKey: key32('signedPreKey.publicKey', signed.publicKey), signature };
  if (!Array.isArray(body.preKeys) || body.preKeys.length < 1 || body.preKeys.length > MAX_PRE_KEYS) {
    throw validation('preKeys', `must be an array of 1..${MAX_PRE_KEYS} one-time pre-keys`);
  }
  const preKeys = body.preKeys.map((k: Record<string, unknown>, i: number) => ({ keyId: keyId(`preKeys[${i}].keyId`, k?.keyId), publicKey: key32(`preKeys[${i}].publicKey`, k?.publicKey) }));
  if (directory.byNoise(noiseKey)) throw new DomainError('conflict', 'a device with this noise key is already registered', {});

  const credential = network.prelink(sessionId, body.phoneNumber);
  const phone = directory.phone(credential.account.phoneNumber);
  const deviceIndex = phone.nextDeviceIndex++;
  const registration = directory.register({ sessionId, noiseKey, identityKey, registrationId });
  const keyBundle: DeviceKeyBundle = { registrationId, identityKey, signedPreKey, preKeys };
  Object.assign(registration, { credential, deviceIndex, keyBundle });
  const linked = linkedDevice(baileys, phone, identityKey, advSecret, deviceIndex, credential.account, network.world.accountExtras.isBusiness(credential.account.jid));
  return { sessionId, deviceIdentity: Buffer.from(linked.deviceIdentity).toString('base64'), deviceIndex, platform: linked.platform, jid: linked.jid, lid: linked.lid };
}
