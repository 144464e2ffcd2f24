import type { lookup as dnsLookup } from 'node:dns';
import type { ClientRequest } from 'node:http';
import type { Agent } from 'node:https';
import type { Duplex } from 'node:stream';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { forbiddenHostReason, guardedLookup, TargetAllowList, TargetRefusedError } from '@app/net-guard';

/**
 * What a session's owner learns when its proxy cannot be used: one generic word, whatever happened (refused by the
 * address guard, connection refused, a handshake or CONNECT the proxy answered with an error). A tenant must not be able
 * to tell a closed port from a listener, or read an address or a socket error, through its session's status: that
 * would make the proxy setting an internal port scanner. The real cause (`detail`) goes to the gateway's log.
 */
export class ProxyUnreachableError extends Error {
  readonly code = 'proxy_unreachable';
  constructor(readonly detail: string, options?: { cause?: unknown }) {
    super('proxy_unreachable', options);
    this.name = 'ProxyUnreachableError';
  }
}

export interface ProxyAgentOptions {
  /** private proxy hosts and ranges the operator allows (SESSION_PROXY_ALLOWED); default none */
  allow?: TargetAllowList;
  /** the resolver under the address guard (tests); default `dns.lookup` */
  lookup?: typeof dnsLookup;
  /** told the real cause of each failure (the gateway logs it) */
  onFailure?: (error: ProxyUnreachableError) => void;
}

type Connect = (req: ClientRequest, opts: { host?: string; port?: number }) => Promise<Duplex>;
interface ProxyAgent {
  connect: Connect;
}

/**
 * Puts the address guard in front of an agent's connect: an IP literal or a loopback / metadata name is refused before
 * any socket (net.connect never asks a lookup for a literal), a name is resolved by the guarded lookup at every connect
 * (so a name that rebinds to 127.0.0.1 is refused), a CONNECT the proxy answers with anything but 200 fails; and every
 * failure is a ProxyUnreachableError.
 */
function guardConnect(agent: ProxyAgent, proxyHost: string, options: ProxyAgentOptions): Agent {
  const allow = options.allow ?? TargetAllowList.EMPTY;
  const inner = agent.connect.bind(agent) as Connect;
  const fail = (detail: string, cause?: unknown): never => {
    const error = new ProxyUnreachableError(detail, { cause });
    options.onFailure?.(error);
    throw error;
  };
  agent.connect = async (req, opts) => {
    const refused = allow.allowsHost(proxyHost) ? null : forbiddenHostReason(proxyHost);
    if (refused) return fail(`proxy ${refused}`, new TargetRefusedError(refused));
    let status: number | null = null;
    req.once('proxyConnect', (answer: { statusCode: number }) => (status = answer.statusCode));
    let socket: Duplex;
    try {
      socket = await inner(req, opts);
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err), err);
    }
    if (status !== null && status !== 200) {
      socket.destroy();
      return fail(`the proxy answered CONNECT with ${status}`);
    }
    return socket;
  };
  return agent as unknown as Agent;
}

/**
 * A session's outbound proxy as Baileys takes it (issue 19 item 10): `agent` for the WhatsApp Web socket, `fetchAgent`
 * for media uploads. HTTP(S) proxies tunnel with CONNECT (`https-proxy-agent`), SOCKS 4/5 with `socks-proxy-agent`
 * (`socks5h`/`socks4a`: the proxy resolves the host names). The proxy is a host a tenant chose, so the connection to it
 * passes the address guard (guardConnect, issue 37). An unknown scheme is refused: connecting directly would leak the
 * address the owner put the proxy in front of.
 */
export function proxyAgentFor(proxyUrl: string, options: ProxyAgentOptions = {}): Agent {
  // both agents tunnel https requests and wss sockets; Baileys types its option as an https.Agent
  const url = new URL(proxyUrl);
  const scheme = url.protocol.replace(/:$/, '');
  const lookup = guardedLookup({ allow: options.allow, lookup: options.lookup });
  if (scheme === 'http' || scheme === 'https') {
    return guardConnect(new HttpsProxyAgent(proxyUrl, { lookup } as never) as unknown as ProxyAgent, url.hostname, options);
  }
  if (scheme.startsWith('socks')) {
    return guardConnect(new SocksProxyAgent(proxyUrl, { socketOptions: { lookup } } as never) as unknown as ProxyAgent, url.hostname, options);
  }
  throw new Error(`unsupported proxy scheme ${scheme}: use http, https, socks4, socks4a, socks5 or socks5h`);
}
