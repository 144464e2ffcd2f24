import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import { rootCertificates } from 'node:tls';
import { buildConnector } from 'undici';
import { forbiddenAddressReason } from './address-class';
import { TargetAllowList } from './allow-list';
import { forbiddenHostReason, normalizeHostname } from './target-host';

/** A target the SSRF guard refused when connecting. */
export class TargetRefusedError extends Error {
  readonly code = 'ETARGETREFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

/** The refusal behind an undici error (undici wraps connector errors in `cause`), or null. */
export function targetRefusalOf(err: unknown): TargetRefusedError | null {
  if (err instanceof TargetRefusedError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof TargetRefusedError ? cause : null;
}

export interface GuardedConnectorOptions {
  /** connect timeout */
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /** extra trusted CA bundle (PEM), added to the system roots */
  ca?: string;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** `dns.lookup`'s shape, as net.connect, tls.connect and undici take it */
export type LookupFunction = (hostname: string, opts: LookupOptions, callback: LookupCallback) => void;

export interface GuardedLookupOptions {
  /** private hosts and ranges the operator allows; default none */
  allow?: TargetAllowList;
  /** the resolver underneath (tests); default `dns.lookup` */
  lookup?: typeof dnsLookup;
}

/**
 * A `lookup` for net.connect / tls.connect / undici that refuses a name when any address it resolves to is forbidden
 * (all but public unicast), unless the name or the address is on the allow-list. It runs at every connect, so a name
 * that resolves differently from when it was saved (DNS rebinding) cannot reach an internal host. IP literals never
 * reach a lookup: check them with forbiddenHostReason before connecting.
 */
export function guardedLookup(options: GuardedLookupOptions = {}): LookupFunction {
  const allow = options.allow ?? TargetAllowList.EMPTY;
  const resolve = options.lookup ?? dnsLookup;
  return (hostname, opts, callback) => {
    // the resolver sees the normalized name, so `LOCALHOST.` resolves like `localhost` and is refused by its address
    const name = normalizeHostname(hostname) ?? hostname;
    const allowedName = allow.allowsHost(name);
    resolve(name, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, opts.all ? [] : '', undefined);
      const list = addresses as LookupAddress[];
      if (!allowedName) {
        // any forbidden answer refuses the name: a rebinding server mixes public and private answers
        for (const a of list) {
          const reason = allow.allowsAddress(a.address) ? null : forbiddenAddressReason(a.address);
          if (reason) return callback(new TargetRefusedError(reason), opts.all ? [] : '', undefined);
        }
      }
      if (list.length === 0) return callback(Object.assign(new Error(`no address for ${name}`), { code: 'ENOTFOUND' }), opts.all ? [] : '', undefined);
      if (opts.all) return callback(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

/**
 * An undici `connect` function with the SSRF guard where the address actually dialled is known, so a DNS answer
 * that changes between validation and connect (rebinding) cannot slip through. Every outbound fetch of a URL a
 * client chose (webhook deliveries, media by URL, link previews, WhatsApp media downloads) goes through it.
 */
export function guardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const guard = !options.allowPrivateTargets;
  const lookup = guard ? guardedLookup() : undefined;
  const connector = buildConnector({
    timeout: options.timeoutMs,
    ca: options.ca ? [...rootCertificates, options.ca] : undefined,
    ...(lookup ? { lookup: lookup as never } : {}),
  });
  return (opts, callback) => {
    // net.connect skips lookup for IP literals, so a literal is checked here; names of loopback and metadata
    // services are refused whatever they resolve to
    if (guard) {
      // plain `localhost` is left to the lookup, which refuses the loopback address it resolves to
      const reason = normalizeHostname(opts.hostname) === 'localhost' ? null : forbiddenHostReason(opts.hostname);
      if (reason) return callback(new TargetRefusedError(reason), null);
    }
    connector(opts, callback);
  };
}
