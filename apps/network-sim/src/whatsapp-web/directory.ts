/**
 * What the WhatsApp Web front door knows beyond SimNetwork's device model: the companion devices that registered
 * through it (keyed by their Noise static key, which is how WhatsApp recognizes a device on login) and the emulated
 * phones (one account key pair per phone number, which signs every device linked to that number). Pairing state,
 * jid and lid stay in SimNetwork; a registration only points at its session id and holds the credential SimNetwork
 * issued, so a login is SimNetwork's resume.
 */
import type { SimCredential } from '@app/contracts';
import { Baileys, KeyPair, newKeyPair } from './wa-kit';

export interface CompanionRegistration {
  sessionId: string;
  /** the companion's Noise static key (Baileys' creds.noiseKey.public) */
  noiseKey: Buffer;
  /** the companion's Signal identity key (creds.signedIdentityKey.public) */
  identityKey: Buffer;
  registrationId: number;
  /** set once a phone linked it: what SimNetwork resumes the device with */
  credential: SimCredential | null;
  /** the device part of its jid (`<phone>:<device>@s.whatsapp.net`) */
  deviceIndex: number | null;
  /** one-time pre-keys uploaded and not handed out */
  preKeyCount: number;
}

export interface EmulatedPhone {
  phoneNumber: string;
  /** the primary device's identity key pair: signs linked devices (ADV) and is its identity in the code flow */
  accountKeyPair: KeyPair;
  nextDeviceIndex: number;
}

export class WaDirectory {
  private readonly byNoiseKey = new Map<string, CompanionRegistration>();
  private readonly phones = new Map<string, EmulatedPhone>();

  constructor(private readonly baileys: () => Baileys) {}

  /** A companion sent its registration payload: a fresh device for this session (an older one is forgotten). */
  register(registration: Omit<CompanionRegistration, 'credential' | 'deviceIndex' | 'preKeyCount'>): CompanionRegistration {
    for (const [key, known] of this.byNoiseKey) if (known.sessionId === registration.sessionId) this.byNoiseKey.delete(key);
    const entry: CompanionRegistration = { ...registration, credential: null, deviceIndex: null, preKeyCount: 0 };
    this.byNoiseKey.set(registration.noiseKey.toString('hex'), entry);
    return entry;
  }

  byNoise(noiseKey: Buffer): CompanionRegistration | undefined {
    return this.byNoiseKey.get(noiseKey.toString('hex'));
  }

  phone(phoneNumber: string): EmulatedPhone {
    let phone = this.phones.get(phoneNumber);
    if (!phone) {
      phone = { phoneNumber, accountKeyPair: newKeyPair(this.baileys()), nextDeviceIndex: 1 };
      this.phones.set(phoneNumber, phone);
    }
    return phone;
  }
}
