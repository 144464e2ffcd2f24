import { BlockList, isIP } from 'node:net';
import { unbracket } from './address-class';

/** `::ffff:10.0.0.1` → `10.0.0.1`: a client reached over an IPv6 socket is matched against IPv4 ranges too. */
export function canonicalAddress(address: string): string {
  const ip = unbracket(address).split('%')[0];
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return mapped ? mapped[1] : ip;
}

/** Why a CIDR (or a bare address) is refused, or null when it is one. */
export function cidrProblem(entry: string): string | null {
  const [base, bits, extra] = entry.split('/');
  const family = isIP(base);
  if (extra !== undefined || family === 0) return 'is not an IPv4 or IPv6 address or CIDR range';
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  return prefix >= 0 && prefix <= max ? null : `has a bad prefix length (0-${max})`;
}

/**
 * A set of client address ranges (IPv4 and IPv6 CIDRs, bare addresses as /32 or /128): an API key's allow-list and
 * the trusted proxies. An empty set matches nothing.
 */
export class AddressRanges {
  private constructor(
    private readonly list: BlockList,
    readonly entries: readonly string[],
  ) {}

  /** Throws on an entry that is not an address or CIDR range, naming it. */
  static parse(entries: readonly string[]): AddressRanges {
    const list = new BlockList();
    for (const entry of entries) {
      const problem = cidrProblem(entry);
      if (problem) throw new Error(`${JSON.stringify(entry)} ${problem}`);
      const [base, bits] = entry.split('/');
      const family = isIP(base);
      list.addSubnet(base, bits === undefined ? (family === 4 ? 32 : 128) : Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    }
    return new AddressRanges(list, [...entries]);
  }

  /** True when the address (IPv4, IPv6, IPv4-mapped IPv6) falls in one of the ranges. */
  contains(address: string): boolean {
    const ip = canonicalAddress(address);
    const family = isIP(ip);
    return family !== 0 && this.list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/**
 * The client of a request as CONTRACT 14 defines it: the socket's peer, or, when the peer is a trusted proxy, the
 * right-most address of `X-Forwarded-For` that is not a trusted proxy (the left-most when every one is). An entry
 * that is not an address ends the walk there: what lies left of it cannot be believed. Express computes the same
 * `req.ip` from `trust proxy` set to `trusted.contains`; the WebSocket upgrade, outside Express, calls this.
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined, trusted: AddressRanges): string {
  let client = canonicalAddress(peer);
  if (!trusted.contains(client)) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? '')).split(',').map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = canonicalAddress(hops[i]);
    if (isIP(hop) === 0) return client;
    client = hop;
    if (!trusted.contains(hop)) return hop;
  }
  return client;
}
