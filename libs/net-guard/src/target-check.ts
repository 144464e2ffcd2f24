import { lookup } from 'node:dns/promises';
import { forbiddenAddressReason, isAddressLiteral } from './address-class';
import { TargetAllowList } from './allow-list';
import { forbiddenHostReason, normalizeHostname } from './target-host';

const LOOKUP_TIMEOUT_MS = 2000;

export interface TargetCheckOptions {
  /** private hosts and ranges the operator allows (an empty list: none) */
  allow?: TargetAllowList;
  /** the resolver (tests); default: the system's, bounded by a short timeout */
  resolve?: (host: string) => Promise<string[]>;
}

/** Every address the system resolver gives a name; an unresolvable or slow name gives none (DNS may be set up later). */
async function resolveQuietly(host: string): Promise<string[]> {
  try {
    const found = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS).unref()),
    ]);
    return found.map((a) => a.address);
  } catch {
    return [];
  }
}

/**
 * Why a host a client chose (a webhook's, a session proxy's) may not be a target, checked when it is saved: its
 * spelling (loopback and metadata names, forbidden address literals in any form) and, for a name, every address it
 * resolves to now. Null: allowed. A name that does not resolve yet is allowed; what connects checks the address it
 * actually dials again (guardedLookup), so a name that later resolves inward (rebinding) is still refused.
 */
export async function refusedTargetReason(host: string, options: TargetCheckOptions = {}): Promise<string | null> {
  const allow = options.allow ?? TargetAllowList.EMPTY;
  if (allow.allowsHost(host)) return null;
  const byName = forbiddenHostReason(host);
  if (byName) return byName;
  const name = normalizeHostname(host)!;
  if (isAddressLiteral(name)) return null;
  for (const address of await (options.resolve ?? resolveQuietly)(name)) {
    if (allow.allowsAddress(address)) continue;
    const reason = forbiddenAddressReason(address);
    if (reason) return reason;
  }
  return null;
}
