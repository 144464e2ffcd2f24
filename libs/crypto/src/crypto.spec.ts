import { randomBytes } from 'node:crypto';
import { hashPassword, verifyPassword } from './passwords';
import { SecretBox } from './secret-box';
import { webhookSignature } from './tokens';

describe('SecretBox', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  it('round-trips and never contains the plaintext', () => {
    const box = new SecretBox([k1]);
    const sealed = box.encrypt('my webhook secret');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(sealed).not.toContain('my webhook secret');
    expect(box.decrypt(sealed)).toBe('my webhook secret');
    expect(box.encrypt('x')).not.toBe(box.encrypt('x'));
  });

  it('reads values sealed with a previous key after rotation and marks them stale', () => {
    const old = new SecretBox([k1]).encrypt('rotate me');
    const rotated = new SecretBox([k2, k1]);
    expect(rotated.decrypt(old)).toBe('rotate me');
    expect(rotated.isStale(old)).toBe(true);
    expect(rotated.isStale(rotated.encrypt('new'))).toBe(false);
    expect(() => new SecretBox([k2]).decrypt(old)).toThrow(/unknown key id/);
  });

  it('refuses tampered ciphertext', () => {
    const box = new SecretBox([k1]);
    const parts = box.encrypt('integrity').split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => box.decrypt(parts.join('.'))).toThrow();
  });
});

describe('passwords', () => {
  it('hashes with scrypt and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(hash).not.toContain('correct horse');
    await expect(verifyPassword('correct horse', hash)).resolves.toBe(true);
    await expect(verifyPassword('wrong horse', hash)).resolves.toBe(false);
    await expect(verifyPassword('x', 'garbage')).resolves.toBe(false);
  });
});

describe('webhookSignature', () => {
  it('is the lowercase hex HMAC-SHA512 of the exact bytes', () => {
    // RFC 4231 test case 2
    expect(webhookSignature('Jefe', 'what do ya want for nothing?')).toBe(
      '164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737',
    );
  });
});
