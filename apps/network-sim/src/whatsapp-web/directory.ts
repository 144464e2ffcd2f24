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
  /** by phone number, and by the user part of their lid */
  private readonly contacts = new Map<string, SignalContact>();
  private readonly contactsByLid = new Map<string, SignalContact>();
  /** `<sessionId> <waMessageId>` of a poll a device sent → its secret (messageContextInfo.messageSecret), for votes */
  readonly polls = new Map<string, { secret: Buffer }>();

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

  /**
   * The contact `jid` (`<digits>@s.whatsapp.net`, or its `…@lid` once known here), with its Signal sessions. `lidOf`
   * is SimNetwork's, so a contact's lid is the one it would have as a paired account.
   */
  contact(jid: string, lidOf: (phoneNumber: string) => string): SignalContact | null {
    const [user, server] = jid.split('@');
    const bare = user.split(':')[0];
    if (server === 'lid') return this.contactsByLid.get(bare) ?? null;
    if (server !== 's.whatsapp.net' || !/^\d{6,15}$/.test(bare)) return null;
    let contact = this.contacts.get(bare);
    if (!contact) {
      contact = new SignalContact(`${bare}@s.whatsapp.net`, lidOf(bare));
      this.contacts.set(bare, contact);
      this.contactsByLid.set(contact.lid.split('@')[0], contact);
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
