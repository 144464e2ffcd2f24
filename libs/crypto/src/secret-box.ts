import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets at rest (webhook secrets, session auth state).
 * Format: `v1.<kid>.<iv>.<tag>.<ciphertext>` (base64url parts). kid names the key, so keys can rotate:
 * the first key encrypts, every listed key decrypts.
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  private readonly currentKid: string;

  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    this.keys = new Map(keys.map((k) => [SecretBox.keyId(k), k]));
    this.currentKid = SecretBox.keyId(keys[0]);
  }

  static keyId(key: Buffer): string {
    return createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  encrypt(plaintext: string | Buffer): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKid)!, iv);
    const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const tag = cipher.getAuthTag();
    return ['v1', this.currentKid, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
  }

  decryptToBuffer(sealed: string): Buffer {
    const [version, kid, iv, tag, ct] = sealed.split('.');
    if (version !== 'v1' || !kid || iv === undefined || tag === undefined || ct === undefined) {
      throw new Error('sealed value has an unknown format');
    }
    const key = this.keys.get(kid);
    if (!key) throw new Error(`sealed value uses unknown key id ${kid}`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
  }

  decrypt(sealed: string): string {
    return this.decryptToBuffer(sealed).toString('utf8');
  }

  /** True when the value was sealed with an older key and should be re-encrypted. */
  isStale(sealed: string): boolean {
    return sealed.split('.')[1] !== this.currentKid;
  }
}
