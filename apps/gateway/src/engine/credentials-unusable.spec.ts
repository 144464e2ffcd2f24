import { assertOwnCredential, credentialOwner, CredentialsUnusableError, credentialsUnusableReason } from './credentials-unusable';

const pair = () => ({ public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) });
/** Baileys' initAuthCreds() after a trip through the auth-state JSON: keys as Buffers. */
const baileys = {
  noiseKey: pair(),
  pairingEphemeralKeyPair: pair(),
  signedIdentityKey: pair(),
  signedPreKey: { keyPair: pair(), signature: Buffer.alloc(64), keyId: 1 },
  registrationId: 77,
  advSecretKey: 'c2VjcmV0',
  registered: true,
};
const sim = { kind: 'sim-device', token: 'tok', account: { jid: '15550001111@s.whatsapp.net', lid: '1@lid', phoneNumber: '15550001111' } };

describe('stored credentials of the other engine', () => {
  it('tells the engines’ credentials apart by shape', () => {
    expect(credentialOwner(baileys)).toBe('baileys');
    expect(credentialOwner(sim)).toBe('sim');
    // a Baileys credential stored as plain JSON arrays (no Buffer revival) is not one its socket can use
    expect(credentialOwner(JSON.parse(JSON.stringify(baileys)))).toBeNull();
    expect(credentialOwner({ ...baileys, noiseKey: undefined })).toBeNull();
    expect(credentialOwner('garbage')).toBeNull();
  });

  it('accepts none and its own, refuses the rest with a detail the reason carries', () => {
    expect(() => assertOwnCredential('sim', null)).not.toThrow();
    expect(() => assertOwnCredential('baileys', null)).not.toThrow();
    expect(() => assertOwnCredential('sim', sim)).not.toThrow();
    expect(() => assertOwnCredential('baileys', baileys)).not.toThrow();
    expect(() => assertOwnCredential('sim', baileys)).toThrow(new CredentialsUnusableError("the stored credential is the baileys engine's, this gateway runs sim"));
    expect(() => assertOwnCredential('baileys', sim)).toThrow(new CredentialsUnusableError("the stored credential is the sim engine's, this gateway runs baileys"));
    expect(() => assertOwnCredential('sim', { x: 1 })).toThrow(new CredentialsUnusableError('the stored credential is not one the sim engine can read'));
    expect(credentialsUnusableReason('x')).toBe('credentials_unusable: x; start the session and scan a new QR');
  });
});
