import { createRequire } from 'node:module';

/**
 * libsignal (the `libsignal` package Baileys encrypts with) decrypts a `msg` by trying it on each session of the
 * contact's record, newest first, and stores the record once one try succeeds: with what the failed tries did to the
 * other sessions. A try on the wrong session already steps that session's ratchet (`maybeStepRatchet`: a new receiving
 * chain, a new sending key pair, a new root key) before the MAC check fails. So a contact's message sent in an older
 * session (one WhatsApp held while the device was away) tried first on the newest one, a session Baileys just started
 * to send in again, breaks that newest session for sending: the contact gets `pkmsg`s on a ratchet it never agreed to
 * and answers `Bad MAC`, for every later message in that session (issue 42, docs/baileys-engine.md "Signal sessions
 * after a failover").
 *
 * Signal's own libraries try each session on a copy and keep only the copy that decrypted; `installTrialDecrypt` makes
 * libsignal's `SessionCipher.decryptWithSessions` do the same. Everything else (the order, the errors and what they
 * say, the `used` stamp, the closed-session warning of the caller) is libsignal's.
 */

interface SessionEntryLike {
  indexInfo: { used?: number };
  serialize(): object;
}

interface SessionEntryClass {
  deserialize(data: object): SessionEntryLike;
}

interface SessionCipherLike {
  doDecryptWhisperMessage(data: Buffer, session: SessionEntryLike): Promise<Buffer>;
}

export interface LibsignalModules {
  SessionCipher: { prototype: object };
  SessionEntry: SessionEntryClass;
  SessionError: new (message: string) => Error;
}

const INSTALLED = Symbol.for('messaging-gateway.libsignal-trial-decrypt');

/**
 * libsignal as Baileys resolves it (the one Baileys' `SessionCipher`s come from), not whichever copy this app's own
 * resolution would find.
 */
export function libsignalOfBaileys(): LibsignalModules {
  const fromBaileys = createRequire(require.resolve('@whiskeysockets/baileys'));
  const SessionCipher = fromBaileys('libsignal/src/session_cipher');
  const SessionRecord = fromBaileys('libsignal/src/session_record');
  const errors = fromBaileys('libsignal/src/errors');
  return { SessionCipher, SessionEntry: SessionRecord.createEntry().constructor, SessionError: errors.SessionError };
}

/** Replaces `decryptWithSessions` once per process; throws when libsignal no longer has the shape this patch is for. */
export function installTrialDecrypt(lib: LibsignalModules = libsignalOfBaileys()): void {
  const proto = lib.SessionCipher.prototype as Record<string | symbol, unknown>;
  if (proto[INSTALLED]) return;
  if (typeof proto.decryptWithSessions !== 'function' || typeof proto.doDecryptWhisperMessage !== 'function' || typeof lib.SessionEntry.deserialize !== 'function') {
    throw new Error('libsignal changed: SessionCipher.decryptWithSessions / doDecryptWhisperMessage or SessionEntry.deserialize is gone; see signal-trial-decrypt.ts');
  }
  const { SessionEntry, SessionError } = lib;
  proto.decryptWithSessions = async function decryptWithSessions(this: SessionCipherLike, data: Buffer, sessions: SessionEntryLike[]) {
    if (!sessions.length) throw new SessionError('No sessions available');
    const errs: unknown[] = [];
    for (const session of sessions) {
      // the try works on a copy: a failed one leaves the session as it was
      const trial = SessionEntry.deserialize(session.serialize());
      let plaintext: Buffer;
      try {
        plaintext = await this.doDecryptWhisperMessage(data, trial);
      } catch (e) {
        errs.push(e);
        continue;
      }
      // the try that decrypted: its state becomes the session's (the record holds `session`, not the copy)
      const target = session as unknown as Record<string, unknown>;
      for (const key of Object.keys(target)) if (!(key in trial)) delete target[key];
      Object.assign(target, trial);
      session.indexInfo.used = Date.now();
      return { session, plaintext };
    }
    // libsignal's own report of a message no session could decrypt
    console.error('Failed to decrypt message with any known session...');
    for (const e of errs) console.error('Session error:' + String(e), (e as Error)?.stack);
    throw new SessionError('No matching sessions found for message');
  };
  proto[INSTALLED] = true;
}
