/**
 * What the WhatsApp Web front door knows beyond SimNetwork's device model: the companion devices that registered
 * through it (keyed by their Noise static key, which is how WhatsApp recognizes a device on login) and the emulated
 * phones (one account key pair per phone number, which signs every device linked to that number), and the contacts
 * that write to them (each with its Signal sessions). Pairing state,
 * jid and lid stay in SimNetwork; a registration only points at its session id and holds the credential SimNetwork
 * issued, so a login is SimNetwork's resume.
 */
import type { SimCredential } from '@app/contracts';
import { DeviceKeyBundle, SignalContact } from './signal-party';
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
  /** what the device uploaded (identity, signed pre-key, one-time pre-keys not handed out yet); null before its first upload */
  keyBundle: DeviceKeyBundle | null;
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
  private readonly contacts = new Map<string, SignalContact>();

  constructor(private readonly baileys: () => Baileys) {}

  /** A companion sent its registration payload: a fresh device for this session (an older one is forgotten). */
  register(registration: Omit<CompanionRegistration, 'credential' | 'deviceIndex' | 'keyBundle'>): CompanionRegistration {
    for (const [key, known] of this.byNoiseKey) if (known.sessionId === registration.sessionId) this.byNoiseKey.delete(key);
    const entry: CompanionRegistration = { ...registration, credential: null, deviceIndex: null, keyBundle: null };
    this.byNoiseKey.set(registration.noiseKey.toString('hex'), entry);
    return entry;
  }

  byNoise(noiseKey: Buffer): CompanionRegistration | undefined {
    return this.byNoiseKey.get(noiseKey.toString('hex'));
  }

  /** The contact writing as `jid`, with its Signal sessions (one per device it wrote to). */
  contact(jid: string): SignalContact {
    let contact = this.contacts.get(jid);
    if (!contact) {
      contact = new SignalContact(jid);
      this.contacts.set(jid, contact);
    }
    return contact;
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
