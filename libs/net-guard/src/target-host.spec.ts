import { forbiddenHostReason, METADATA_HOST_NAMES, normalizeHostname } from './target-host';

describe('normalizeHostname', () => {
  it.each([
    ['LOCALHOST.', 'localhost'],
    ['Hooks.Example.COM', 'hooks.example.com'],
    ['example.com..', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['[::1]', '::1'],
    ['[FD00::1]', 'fd00::1'],
    ['0x7f.1', '127.0.0.1'],
  ])('%s is %s', (host, normalized) => {
    expect(normalizeHostname(host)).toBe(normalized);
  });

  it('is null for what is not a host name', () => {
    expect(normalizeHostname('exa mple.com')).toBeNull();
    expect(normalizeHostname('')).toBeNull();
  });
});

describe('forbiddenHostReason', () => {
  it.each([
    ['localhost', 'target host localhost is a loopback name'],
    ['LOCALHOST.', 'target host localhost is a loopback name'],
    ['api.localhost', 'target host api.localhost is a loopback name'],
    ['metadata.google.internal', 'target host metadata.google.internal is a cloud metadata service'],
    ['Metadata.Google.Internal.', 'target host metadata.google.internal is a cloud metadata service'],
    ['metadata', 'target host metadata is a cloud metadata service'],
    ['instance-data', 'target host instance-data is a cloud metadata service'],
    ['metadata.azure.com', 'target host metadata.azure.com is a cloud metadata service'],
    ['127.0.0.1', 'target address 127.0.0.1 is loopback'],
    ['[::ffff:0:7f00:1]', 'target address ::ffff:0:7f00:1 is loopback'],
    ['[::ffff:0:a9fe:a9fe]', 'target address ::ffff:0:a9fe:a9fe is metadata'],
    ['0x7f.1', 'target address 127.0.0.1 is loopback'],
  ])('%s is refused', (host, reason) => {
    expect(forbiddenHostReason(host)).toBe(reason);
  });

  it('refuses every listed metadata name, whatever its case', () => {
    for (const name of METADATA_HOST_NAMES) expect(forbiddenHostReason(name.toUpperCase())).toMatch(/cloud metadata service/);
  });

  it('leaves public names and addresses to the resolver', () => {
    for (const host of ['hooks.example.com', 'metadata.example.com', 'localhost.example.com', '8.8.8.8', '[2606:4700:4700::1111]', 'bücher.de']) {
      expect(forbiddenHostReason(host)).toBeNull();
    }
  });
});
