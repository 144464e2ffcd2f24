import type { Agent } from 'node:https';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';

/**
 * A session's outbound proxy as Baileys takes it (issue 19 item 10): `agent` for the WhatsApp Web socket, `fetchAgent`
 * for media uploads. HTTP(S) proxies tunnel with CONNECT (`https-proxy-agent`), SOCKS 4/5 with `socks-proxy-agent`
 * (`socks5h`/`socks4a`: the proxy resolves the host names). Both packages were already in the lockfile (transitively);
 * they are now direct dependencies. An unknown scheme is refused: connecting directly would leak the address the owner
 * put the proxy in front of.
 */
export function proxyAgentFor(proxyUrl: string): Agent {
  // both agents tunnel https requests and wss sockets; Baileys types its option as an https.Agent
  const scheme = new URL(proxyUrl).protocol.replace(/:$/, '');
  if (scheme === 'http' || scheme === 'https') return new HttpsProxyAgent(proxyUrl) as unknown as Agent;
  if (scheme.startsWith('socks')) return new SocksProxyAgent(proxyUrl) as unknown as Agent;
  throw new Error(`unsupported proxy scheme ${scheme}: use http, https, socks4, socks4a, socks5 or socks5h`);
}
