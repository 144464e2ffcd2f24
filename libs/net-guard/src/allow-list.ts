import { BlockList, isIP } from 'node:net';
import { unbracket } from './address-class';
import { normalizeHostname } from './target-host';

/**
 * Private targets an operator vouches for, by host name or address range: `proxy.internal, 10.8.0.0/16, fd00::/8,
 * 192.168.1.5`. Everything else stays under the address guard. An empty list allows nothing.
 */
export class TargetAllowList {
  private constructor(
    private readonly names: ReadonlySet<string>,
    private readonly ranges: BlockList,
    /** the entries as written, for logs and docs */
    readonly entries: readonly string[],
  ) {}

  static readonly EMPTY = new TargetAllowList(new Set(), new BlockList(), []);

  /** Parses a comma-separated list; throws on an entry that is neither a host name, an address nor a CIDR range. */
  static parse(text: string | undefined): TargetAllowList {
    const entries = (text ?? '').split(',').map((e) => e.trim()).filter(Boolean);
    const names = new Set<string>();
    const ranges = new BlockList();
    for (const entry of entries) {
      const [base, bits, extra] = entry.split('/');
      const address = unbracket(base);
      const family = isIP(address);
      if (extra !== undefined) throw new Error(`${JSON.stringify(entry)} is not a host name, an address or a CIDR range`);
      if (family !== 0) {
        const max = family === 4 ? 32 : 128;
        const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
        if (!(prefix >= 0 && prefix <= max)) throw new Error(`${JSON.stringify(entry)} has a bad prefix length (0-${max})`);
        ranges.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
        continue;
      }
      const name = bits === undefined ? normalizeHostname(base) : null;
      if (!name || !/^[a-z0-9.-]+$/.test(name)) throw new Error(`${JSON.stringify(entry)} is not a host name, an address or a CIDR range`);
      names.add(name);
    }
    return new TargetAllowList(names, ranges, entries);
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** True when the host (name or address literal, any spelling) is listed by name or falls in a listed range. */
  allowsHost(host: string): boolean {
    const name = normalizeHostname(host);
    if (name === null) return false;
    return this.names.has(name) || this.allowsAddress(name);
  }

  /** True when an address (IPv4, IPv6, IPv4-mapped IPv6) falls in a listed range. */
  allowsAddress(address: string): boolean {
    const ip = unbracket(address).split('%')[0];
    const family = isIP(ip);
    if (family === 0) return false;
    return this.ranges.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }
}
