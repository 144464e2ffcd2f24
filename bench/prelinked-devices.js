// Benchmarks only: Baileys sessions linked without the QR flow (apps/network-sim/src/whatsapp-web/prelink.ts). For each
// session: creds made by Baileys' own initAuthCreds, a few one-time pre-keys, the emulator's `pair-success` answer run
// through Baileys' own configureSuccessfulPairing, then the creds and keys written to the session's auth state in
// PostgreSQL (the gateway's own store, sealed with the run's key). The session then logs in like any paired device.
// Needs a simulator started with SIM_TEST_PRELINK=true and the sessions' rows in place.
'use strict';
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
/** one-time pre-keys per device: above Baileys' MIN_PREKEY_COUNT (5), so its login uploads none */
const PRE_KEYS = 30;

async function prelinker({ simUrl, databaseUrl, encryptionKey }) {
  const baileys = await import('@whiskeysockets/baileys');
  const { Db, poolSettings, SessionAuthKeysRepository } = require(join(ROOT, 'dist/libs/database/src/index.js'));
  const { SecretBox } = require(join(ROOT, 'dist/libs/crypto/src/index.js'));
  const { createPgAuthStateStore } = require(join(ROOT, 'dist/apps/gateway/src/auth-state/index.js'));
  const db = Db.open(poolSettings(databaseUrl, { max: 4 }));
  const keys = new SessionAuthKeysRepository(db);
  const box = new SecretBox([Buffer.from(encryptionKey, 'base64')]);
  const b64 = (bytes) => Buffer.from(bytes).toString('base64');

  /** Links `sessionId` to `phoneNumber` on the emulator and stores what its device would have stored. */
  const link = async (sessionId, phoneNumber) => {
    const creds = baileys.initAuthCreds();
    const preKeys = {};
    for (let id = 1; id <= PRE_KEYS; id++) preKeys[id] = baileys.Curve.generateKeyPair();
    creds.nextPreKeyId = PRE_KEYS + 1;
    creds.firstUnuploadedPreKeyId = PRE_KEYS + 1;
    const res = await fetch(`${simUrl}/sim/whatsapp-web/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sessionId,
        phoneNumber,
        noiseKey: b64(creds.noiseKey.public),
        identityKey: b64(creds.signedIdentityKey.public),
        registrationId: creds.registrationId,
        advSecret: creds.advSecretKey,
        signedPreKey: { keyId: creds.signedPreKey.keyId, publicKey: b64(creds.signedPreKey.keyPair.public), signature: b64(creds.signedPreKey.signature) },
        preKeys: Object.entries(preKeys).map(([id, pair]) => ({ keyId: Number(id), publicKey: b64(pair.public) })),
      }),
    });
    const linked = await res.json();
    if (res.status !== 200) throw new Error(`prelink of ${sessionId} answered ${res.status}: ${JSON.stringify(linked)}`);
    // what the companion does with `pair-success`: Baileys' own code, so the creds are exactly a paired device's
    const stanza = {
      tag: 'iq',
      attrs: { id: 'prelink', type: 'set', xmlns: 'md', from: 's.whatsapp.net' },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            { tag: 'device-identity', attrs: { 'key-index': String(linked.deviceIndex) }, content: Buffer.from(linked.deviceIdentity, 'base64') },
            { tag: 'platform', attrs: { name: linked.platform } },
            { tag: 'device', attrs: { jid: linked.jid, lid: linked.lid } },
          ],
        },
      ],
    };
    const paired = baileys.configureSuccessfulPairing(stanza, creds);
    Object.assign(creds, paired.creds);
    const store = createPgAuthStateStore(keys, box, sessionId);
    await store.writeKeys({ 'pre-key': preKeys });
    await store.writeCreds(creds);
    return linked;
  };
  return { link, close: () => db.close() };
}

module.exports = { prelinker, PRE_KEYS };
