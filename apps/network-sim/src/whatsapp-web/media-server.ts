/**
 * The media host's server: what `media_conn` names (WhatsApp's mmg CDN), an HTTPS server on loopback. Devices upload encrypted
 * media to `POST /mms/<type>/<fileEncSha256 b64url>?auth=<media_conn auth>&token=…` and get back its `direct_path`
 * and `url`; anyone with the path downloads the encrypted bytes with `GET <direct_path>`, and only a holder of the
 * message's media key can read them (media-crypto.ts). Contacts' phones upload here too (inbound media, history).
 *
 * Its TLS certificate is signed by a CA made per simulator run (never a real one); `GET /sim/whatsapp-web/trust`
 * hands the CA out (`mediaCa`) so the gateway's test seam trusts it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { generate } from 'selfsigned';
import type { SimNetwork } from '../sim-network';
import type { BinaryNode } from './wa-kit';

/** How long Baileys may reuse a media_conn before asking again (seconds), as WhatsApp answers. */
const MEDIA_CONN_TTL_S = 300;
/** The largest upload the host takes (WhatsApp's documents go to 2 GB; tests send kilobytes). */
export const MEDIA_HOST_MAX_BYTES = 64 * 1024 * 1024;
const UPLOAD_PATH = /^\/mms\/([a-z-]+)\/([A-Za-z0-9_-]+)$/;

export interface StoredUpload {
  directPath: string;
  url: string;
}

/** base64url without padding: how Baileys writes fileEncSha256 into the upload path (encodeBase64EncodedStringForUpload). */
export function uploadToken(file: Buffer): string {
  return createHash('sha256').update(file).digest('base64url');
}

export class MediaHost {
  /** encrypted files by direct path (without its query) */
  private readonly files = new Map<string, Buffer>();
  /** the media_conn auth an upload must carry */
  private readonly auth = randomBytes(24).toString('base64url');

  private constructor(
    private readonly server: Server,
    readonly caPem: string,
    private readonly logger?: Logger,
  ) {}

  /** A fresh CA and a certificate for 127.0.0.1 it signs, then the server on a free loopback port. */
  static async start(logger?: Logger): Promise<MediaHost> {
    const ca = await generate([{ name: 'commonName', value: 'Network simulator media CA (test only)' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      ],
    });
    const leaf = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      ca: { key: ca.private, cert: ca.cert },
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
      ],
    });
    let host: MediaHost | null = null;
    const server = createServer({ key: leaf.private, cert: leaf.cert }, (req, res) => host!.handle(req, res));
    host = new MediaHost(server, ca.cert, logger);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return host;
  }

  /** `127.0.0.1:<port>`: what `media_conn` names as the host (Baileys builds `https://<hostname><path>`). */
  get hostname(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The content of the `media_conn` answer. */
  mediaConn(): BinaryNode {
    return {
      tag: 'media_conn',
      attrs: { auth: this.auth, ttl: String(MEDIA_CONN_TTL_S), auth_ttl: String(MEDIA_CONN_TTL_S), max_buckets: '12' },
      content: [{ tag: 'host', attrs: { hostname: this.hostname, maxContentLengthBytes: String(MEDIA_HOST_MAX_BYTES) } }],
    };
  }

  /** Keeps an encrypted file (a phone's upload, or a device's through HTTPS) and answers where it is. */
  put(file: Buffer, kind: string): StoredUpload {
    const id = randomBytes(16).toString('hex');
    const directPath = `/v/t62.7118-24/${kind}-${id}.enc`;
    this.files.set(directPath, file);
    const query = `?ccb=11-4&oh=${randomBytes(8).toString('hex')}&oe=${Math.floor(Date.now() / 1000 + 30 * 86400).toString(16)}`;
    return { directPath: directPath + query, url: `https://${this.hostname}${directPath}${query}&mms3=true` };
  }

  /** The encrypted file at a direct path or url (its query ignored), as a download gets it. */
  get(directPathOrUrl: string): Buffer | undefined {
    return this.files.get(new URL(directPathOrUrl, 'https://media.invalid').pathname);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://media.invalid');
    const upload = UPLOAD_PATH.exec(url.pathname);
    if (req.method === 'POST' && upload) {
      this.upload(req, res, upload[1], upload[2], url.searchParams.get('auth') ?? '').catch((err) => {
        this.logger?.warn({ err }, 'media upload failed');
        if (!res.headersSent) json(res, 500, { error: 'internal' });
      });
      return;
    }
    const file = req.method === 'GET' ? this.files.get(url.pathname) : undefined;
    if (!file) return json(res, 404, { error: 'not found' });
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.length) });
    res.end(file);
  }

  /** An upload is taken when it carries this host's auth and its bytes hash to the token in its path. */
  private async upload(req: IncomingMessage, res: ServerResponse, kind: string, token: string, auth: string): Promise<void> {
    if (!safeEqual(auth, this.auth)) {
      req.resume();
      return json(res, 401, { error: 'bad auth' });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MEDIA_HOST_MAX_BYTES) return json(res, 413, { error: 'too large' });
      chunks.push(chunk);
    }
    const file = Buffer.concat(chunks);
    if (uploadToken(file) !== token) return json(res, 400, { error: 'the file does not hash to its token' });
    const stored = this.put(file, kind);
    json(res, 200, { url: stored.url, direct_path: stored.directPath });
  }
}

function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The media host of each network (one per simulator run, started with its WhatsApp Web front door). */
const HOSTS = new WeakMap<SimNetwork, MediaHost>();

export function attachMediaHost(network: SimNetwork, host: MediaHost): void {
  HOSTS.set(network, host);
}

export function mediaHostOf(network: SimNetwork | undefined): MediaHost | undefined {
  return network ? HOSTS.get(network) : undefined;
}
