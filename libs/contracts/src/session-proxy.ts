/**
 * A session's outbound proxy (issue 19 item 10): an HTTP(S) or SOCKS URL, `scheme://[user[:password]@]host[:port]`.
 * It may carry credentials, so it is stored sealed and shown masked.
 */
export const PROXY_URL_PATTERN = /^(https?|socks5h?|socks4a?):\/\/(?:[^\s/@:]+(?::[^\s/@]*)?@)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?\/?$/;

export const PROXY_URL_SCHEMES = ['http', 'https', 'socks4', 'socks4a', 'socks5', 'socks5h'] as const;

/** The URL without its credentials: `socks5://user:secret@host:1080` → `socks5://***@host:1080`. */
export function maskProxyUrl(url: string): string {
  const parsed = new URL(url);
  const credentials = parsed.username || parsed.password ? '***@' : '';
  return `${parsed.protocol}//${credentials}${parsed.host}`;
}
