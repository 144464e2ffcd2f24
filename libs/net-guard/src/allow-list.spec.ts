import { TargetAllowList } from './allow-list';
import { refusedTargetReason } from './target-check';

describe('TargetAllowList', () => {
  const list = TargetAllowList.parse(' Proxy.Internal. , 10.8.0.0/16, fd00::/8, 192.168.1.5 ');

  it('allows listed names in any spelling, and addresses in listed ranges in any form', () => {
    for (const host of ['proxy.internal', 'PROXY.INTERNAL.', '10.8.200.1', '192.168.1.5', '[fd00::1]', '::ffff:10.8.0.1']) {
      expect({ host, allowed: list.allowsHost(host) }).toEqual({ host, allowed: true });
    }
  });

  it('allows nothing else', () => {
    for (const host of ['other.internal', 'sub.proxy.internal', '10.9.0.1', '192.168.1.6', '[::1]', '127.0.0.1']) {
      expect({ host, allowed: list.allowsHost(host) }).toEqual({ host, allowed: false });
    }
    expect(TargetAllowList.parse('').allowsHost('10.0.0.1')).toBe(false);
    expect(TargetAllowList.EMPTY.isEmpty).toBe(true);
  });

  it.each(['10.0.0.0/33', 'fd00::/129', '10.0.0.0/x', 'a b', 'http://proxy', '10.0.0.0/8/1'])('refuses the entry %s', (entry) => {
    expect(() => TargetAllowList.parse(entry)).toThrow(JSON.stringify(entry));
  });
});

describe('refusedTargetReason', () => {
  const resolvesTo = (...addresses: string[]) => async () => addresses;

  it('refuses forbidden spellings and names that resolve inward, and says why', async () => {
    expect(await refusedTargetReason('0x7f.1')).toBe('target address 127.0.0.1 is loopback');
    expect(await refusedTargetReason('metadata.google.internal')).toBe('target host metadata.google.internal is a cloud metadata service');
    expect(await refusedTargetReason('proxy.example', { resolve: resolvesTo('93.184.215.14', '10.0.0.7') })).toBe('target address 10.0.0.7 is private');
  });

  it('accepts public targets, unresolvable names, and what the allow-list names', async () => {
    expect(await refusedTargetReason('proxy.example', { resolve: resolvesTo('93.184.215.14') })).toBeNull();
    expect(await refusedTargetReason('proxy.example', { resolve: resolvesTo() })).toBeNull();
    const allow = TargetAllowList.parse('10.0.0.0/8,proxy.internal');
    expect(await refusedTargetReason('10.1.2.3', { allow })).toBeNull();
    expect(await refusedTargetReason('proxy.internal', { allow, resolve: resolvesTo('192.168.0.1') })).toBeNull();
    expect(await refusedTargetReason('proxy.example', { allow, resolve: resolvesTo('10.0.0.7') })).toBeNull();
    expect(await refusedTargetReason('proxy.example', { allow, resolve: resolvesTo('10.0.0.7', '127.0.0.1') })).toBe('target address 127.0.0.1 is loopback');
  });
});
