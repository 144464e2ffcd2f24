import { isSimCredential } from '@app/contracts';

/**
 * A session's stored credential this engine cannot use: another engine wrote it (a demo run with `--engine baileys`
 * after the sim engine paired its sessions, or the reverse), or it does not decode. No reconnect can fix that, so
 * `connect()` throws this before opening any socket and the SessionRunner logs the session out (credentials wiped,
 * status `logged_out`, a reason that says to scan again): docs/sessions.md, "Statuses".
 */
export class CredentialsUnusableError extends Error {
  constructor(readonly detail: string) {
    super(`stored credentials unusable: ${detail}`);
    this.name = 'CredentialsUnusableError';
  }
}

/** The session status reason for it: what happened, and what the user does next. */
export function credentialsUnusableReason(detail: string): string {
  return `credentials_unusable: ${detail}; start the session and scan a new QR`;
}

function isKeyPair(value: unknown): boolean {
  const pair = value as { public?: unknown; private?: unknown } | null;
  return typeof pair === 'object' && pair !== null && pair.public instanceof Uint8Array && pair.private instanceof Uint8Array;
}

/**
 * Whether `value` is Baileys' AuthenticationCreds as the auth-state JSON gives them back (keys as Buffers): the fields
 * its socket reads before anything else (the Noise handshake, the registration payload).
 */
export function isBaileysCredential(value: unknown): boolean {
  const c = value as Record<string, unknown> | null;
  if (typeof c !== 'object' || c === null) return false;
  const signedPreKey = c.signedPreKey as { keyPair?: unknown } | null | undefined;
  return (
    isKeyPair(c.noiseKey) &&
    isKeyPair(c.pairingEphemeralKeyPair) &&
    isKeyPair(c.signedIdentityKey) &&
    typeof signedPreKey === 'object' && signedPreKey !== null && isKeyPair(signedPreKey.keyPair) &&
    typeof c.registrationId === 'number' &&
    typeof c.advSecretKey === 'string'
  );
}

/** Which engine wrote a stored credential, by its shape; null when it is neither's. */
export function credentialOwner(value: unknown): 'sim' | 'baileys' | null {
  if (isSimCredential(value)) return 'sim';
  if (isBaileysCredential(value)) return 'baileys';
  return null;
}

/** Throws CredentialsUnusableError when `stored` (a readCreds result, null = none) is not `engine`'s own. */
export function assertOwnCredential(engine: 'sim' | 'baileys', stored: unknown): void {
  if (stored === null || stored === undefined) return;
  const owner = credentialOwner(stored);
  if (owner === engine) return;
  throw new CredentialsUnusableError(
    owner ? `the stored credential is the ${owner} engine's, this gateway runs ${engine}` : `the stored credential is not one the ${engine} engine can read`,
  );
}
