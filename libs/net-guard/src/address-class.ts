import { isIP } from 'node:net';

/**
 * What kind of network an IP address belongs to, as far as webhook egress cares.
 * Everything except `public` is refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS is true.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'cgnat'
  | 'unique-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'invalid';

interface V4Range {
  base: number;
  bits: number;
  kind: AddressClass;
}

const v4 = (dotted: string, bits: number, kind: AddressClass): V4Range => ({ base: parseV4(dotted)!, bits, kind });

// Order matters: the first match wins, so the narrower metadata range precedes link-local.
const V4_RANGES: V4Range[] = [
  v4('169.254.169.254', 32, 'metadata'), // AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack
  v4('100.100.100.200', 32, 'metadata'), // Alibaba Cloud (inside CGNAT space)
  v4('192.0.0.192', 32, 'metadata'), // Oracle Cloud classic
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'cgnat'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.0.2.0', 24, 'reserved'),
  v4('192.88.99.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'),
  v4('198.51.100.0', 24, 'reserved'),
  v4('203.0.113.0', 24, 'reserved'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('255.255.255.255', 32, 'broadcast'),
  v4('240.0.0.0', 4, 'reserved'),
];

function parseV4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

function classifyV4(value: number): AddressClass {
  for (const range of V4_RANGES) {
    const size = 2 ** (32 - range.bits);
    if (Math.floor(value / size) === Math.floor(range.base / size)) return range.kind;
  }
  return 'public';
}

/** Eight 16-bit groups, or null when the text is not an IPv6 address. */
function parseV6(text: string): number[] | null {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.', lastColon)) {
    // a trailing dotted quad stands for the last two groups
    const embedded = parseV4(s.slice(lastColon + 1));
    if (embedded === null) return null;
    s = `${s.slice(0, lastColon + 1)}${Math.floor(embedded / 65536).toString(16)}:${(embedded % 65536).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const parsed = [...head, ...rest].map((g) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  if (parsed.some((n) => Number.isNaN(n))) return null;
  const explicit = parsed.length;
  if (halves.length === 1 && explicit !== 8) return null;
  if (halves.length === 2 && explicit > 7) return null;
  const zeros = new Array<number>(8 - explicit).fill(0);
  const headNums = parsed.slice(0, head.length);
  const restNums = parsed.slice(head.length);
  return halves.length === 2 ? [...headNums, ...zeros, ...restNums] : headNums;
}

function classifyV6(g: number[]): AddressClass {
  const allZeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const embeddedV4 = (hi: number, lo: number) => hi * 65536 + lo;
  if (allZeroUpTo(8)) return 'unspecified';
  if (allZeroUpTo(7) && g[7] === 1) return 'loopback';
  // Every form that embeds an IPv4 address reaches (or is translated to) that IPv4 host, so it is classified by it:
  // IPv4-mapped ::ffff:a.b.c.d (RFC 4291 2.5.5.2), the deprecated IPv4-compatible ::a.b.c.d (2.5.5.1),
  // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765 2.1), NAT64 64:ff9b::/96 (RFC 6052) and 6to4 2002::/16 (RFC 3056)
  if (allZeroUpTo(5) && g[5] === 0xffff) return classifyV4(embeddedV4(g[6], g[7]));
  if (allZeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return classifyV4(embeddedV4(g[6], g[7]));
  if (allZeroUpTo(6)) return classifyV4(embeddedV4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyV4(embeddedV4(g[6], g[7]));
  // local-use NAT64 (64:ff9b:1::/48, RFC 8215) translates into the operator's own network
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'private';
  if (g[0] === 0x2002) return classifyV4(embeddedV4(g[1], g[2]));
  // Teredo 2001:0::/32 (RFC 4380 4): server IPv4 in groups 2-3, client IPv4 in groups 6-7 with every bit inverted;
  // a packet to it is relayed to the client, so the client decides, and a private server is refused too
  if (g[0] === 0x2001 && g[1] === 0) {
    const client = classifyV4(embeddedV4(g[6] ^ 0xffff, g[7] ^ 0xffff));
    return client !== 'public' ? client : classifyV4(embeddedV4(g[2], g[3]));
  }
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) return 'metadata';
  if ((g[0] & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'reserved'; // documentation
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return 'reserved'; // discard-only
  return 'public';
}

/** Strips the brackets of a URL host (`[::1]`) so the literal can be classified. */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Classifies an IPv4 or IPv6 literal (brackets and zone ids accepted). Anything else is `invalid`. */
export function classifyAddress(ip: string): AddressClass {
  const text = unbracket(ip.trim());
  const family = isIP(text.split('%')[0]);
  if (family === 4) return classifyV4(parseV4(text)!);
  if (family === 6) {
    const groups = parseV6(text);
    return groups ? classifyV6(groups) : 'invalid';
  }
  return 'invalid';
}

/** True for every address a webhook must not reach by default (all but public unicast). */
export function isForbiddenAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'public';
}

/** `"target address 10.0.0.1 is private"`, or null when the address is public. */
export function forbiddenAddressReason(ip: string): string | null {
  const kind = classifyAddress(ip);
  return kind === 'public' ? null : `target address ${unbracket(ip)} is ${kind}`;
}

/** True when the host of a URL is an IP literal rather than a name. */
export function isAddressLiteral(host: string): boolean {
  return isIP(unbracket(host).split('%')[0]) !== 0;
}
