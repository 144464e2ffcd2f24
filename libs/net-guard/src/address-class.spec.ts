import { classifyAddress, forbiddenAddressReason, isAddressLiteral, isForbiddenAddress } from './address-class';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.10.1', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a00:1', 'private'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['64:ff9b::10.1.2.3', 'private'],
    ['2002:0a00:0001::', 'private'],
    ['[::1]', 'loopback'],
    ['2001:db8::1', 'reserved'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    // IPv4-mapped, dotted and hex
    ['::ffff:192.168.0.1', 'private'],
    ['::ffff:c0a8:1', 'private'],
    ['[::ffff:a9fe:a9fe]', 'metadata'],
    // IPv4-compatible (deprecated)
    ['::127.0.0.1', 'loopback'],
    ['::a00:1', 'private'],
    // IPv4-translated ::ffff:0:a.b.c.d, dotted and hex
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['[::ffff:0:a9fe:a9fe]', 'metadata'],
    ['0:0:0:0:ffff:0:a00:1', 'private'],
    // NAT64 well-known prefix, dotted and hex, and the local-use prefix
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::c0a8:101', 'private'],
    ['64:ff9b:1::8.8.8.8', 'private'],
    // 6to4
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:6440:1::', 'cgnat'],
    // Teredo: server 65.54.227.120, client bits inverted (127.0.0.1 -> 80ff:fffe, 10.0.0.1 -> f5ff:fffe)
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['2001::4136:e378:8000:63bf:f5ff:fffe', 'private'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'],
    // Teredo with a public client but a private server
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'private'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.128.0.1',
    '172.32.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2002:0808:0808::',
    '::ffff:0:8.8.8.8',
    '64:ff9b::808:808',
    // Teredo: server 65.54.227.120, client 8.8.8.8 (inverted f7f7:f7f7)
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ])(
    '%s is public',
    (ip) => {
      expect(classifyAddress(ip)).toBe('public');
      expect(isForbiddenAddress(ip)).toBe(false);
      expect(forbiddenAddressReason(ip)).toBeNull();
    },
  );

  it('treats anything that is not an IP literal as invalid, hence forbidden', () => {
    for (const text of ['example.com', '', '1.2.3', '1.2.3.256', ':::1', '1:2:3:4:5:6:7:8:9', '::ffff:1.2.3.999']) {
      expect(classifyAddress(text)).toBe('invalid');
      expect(isForbiddenAddress(text)).toBe(true);
    }
  });

  it('explains a refusal in one line naming the address', () => {
    expect(forbiddenAddressReason('10.0.0.1')).toBe('target address 10.0.0.1 is private');
    expect(forbiddenAddressReason('[fd00:ec2::254]')).toBe('target address fd00:ec2::254 is metadata');
  });

  it('tells IP literals from host names', () => {
    expect(isAddressLiteral('[::1]')).toBe(true);
    expect(isAddressLiteral('10.1.1.1')).toBe(true);
    expect(isAddressLiteral('hooks.example.com')).toBe(false);
  });
});
