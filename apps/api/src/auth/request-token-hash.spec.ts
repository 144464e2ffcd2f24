import { sha256Hex } from '@app/crypto';
import { requestTokenHash } from './access-token';

describe('requestTokenHash', () => {
  it('is the token’s SHA-256, computed once per request and token', () => {
    const req = {};
    const hash = requestTokenHash(req, 'gwk_a');
    expect(hash).toBe(sha256Hex('gwk_a'));
    expect(requestTokenHash(req, 'gwk_a')).toBe(hash);
    // another token on the same request (never the case in the API, but never a stale answer either)
    expect(requestTokenHash(req, 'gwk_b')).toBe(sha256Hex('gwk_b'));
    expect(requestTokenHash({}, 'gwk_a')).toBe(hash);
  });
});
