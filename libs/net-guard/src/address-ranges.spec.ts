import { AddressRanges, cidrProblem, clientAddress } from './address-ranges';

describe('AddressRanges', () => {
  it('matches IPv4 and IPv6 CIDRs, bare addresses, and IPv4-mapped IPv6 peers', () => {
    const r = AddressRanges.parse(['10.0.0.0/8', '2001:db8::/32', '192.168.1.5']);
    expect(r.contains('10.20.30.40')).toBe(true);
    expect(r.contains('::ffff:10.1.2.3')).toBe(true);
    expect(r.contains('2001:db8::1')).toBe(true);
    expect(r.contains('192.168.1.5')).toBe(true);
    expect(r.contains('192.168.1.6')).toBe(false);
    expect(r.contains('2001:db9::1')).toBe(false);
    expect(r.contains('not-an-ip')).toBe(false);
    expect(AddressRanges.parse([]).contains('127.0.0.1')).toBe(false);
  });

  it('refuses what is not a CIDR', () => {
    expect(cidrProblem('10.0.0.0/33')).toMatch(/prefix/);
    expect(cidrProblem('example.com')).toMatch(/not an IPv4/);
    expect(cidrProblem('10.0.0.0/8/1')).toMatch(/not an IPv4/);
    expect(cidrProblem('::/0')).toBeNull();
    expect(() => AddressRanges.parse(['1.2.3.4/x'])).toThrow('1.2.3.4/x');
  });
});

describe('clientAddress', () => {
  const proxies = AddressRanges.parse(['127.0.0.1', '10.0.0.0/8']);
  it('is the peer when the peer is not a trusted proxy, whatever X-Forwarded-For says', () => {
    expect(clientAddress('203.0.113.9', '198.51.100.1', proxies)).toBe('203.0.113.9');
  });
  it('is the right-most untrusted hop behind trusted proxies', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.7, 203.0.113.5, 10.1.1.1', proxies)).toBe('203.0.113.5');
    expect(clientAddress('::ffff:127.0.0.1', ['198.51.100.7'], proxies)).toBe('198.51.100.7');
  });
  it('stops at a hop that is not an address, and is the left-most when every hop is trusted', () => {
    expect(clientAddress('127.0.0.1', 'garbage, 10.2.2.2', proxies)).toBe('10.2.2.2');
    expect(clientAddress('127.0.0.1', '10.3.3.3, 10.2.2.2', proxies)).toBe('10.3.3.3');
    expect(clientAddress('127.0.0.1', undefined, proxies)).toBe('127.0.0.1');
  });
});
