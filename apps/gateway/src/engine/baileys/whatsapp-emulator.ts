/**
 * The test seam of CONTRACT 9: a gateway started with WHATSAPP_EMULATOR_URL (never in production, libs/config)
 * connects its Baileys sockets to the network simulator's WhatsApp Web front door instead of WhatsApp, and trusts the
 * test root key the simulator signs its Noise certificate chain with. The trust is fetched once, at boot, and written
 * into Baileys' WA_CERT_DETAILS (the object its noise handler verifies the server's chain against). The socket URL
 * names the session (`?sessionId=`), since Baileys never tells the network which session a socket is. The trust also
 * carries the CA of the emulator's media host (`mediaCa`, the HTTPS host `media_conn` names): the gateway process
 * then trusts it beside the system roots, for Baileys' uploads (node:https' global agent, which Baileys uses when a
 * session has no proxy) and every download (the global fetch dispatcher: media, eager or on demand). Nothing else
 * about the engine changes.
 */
import { SIM_WA_WEB_PATH, SIM_WA_WEB_TRUST_PATH, SimWaWebTrust } from '@app/contracts';
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import { rootCertificates } from 'node:tls';
import { Agent, setGlobalDispatcher } from 'undici';

/** Baileys' WA_CERT_DETAILS: the root a server's certificate chain must lead to. */
export interface CertificateRoot {
  PUBLIC_KEY: Buffer;
  SERIAL: number;
}

export interface WhatsAppEmulator {
  trust: SimWaWebTrust;
  /** where the socket of `sessionId` connects */
  socketUrl(sessionId: string): string;
}

/** The WA_CERT_DETAILS object of the loaded Baileys module (mutable by design: exported as a plain object). */
function baileysCertificateRoot(): CertificateRoot {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('@whiskeysockets/baileys') as typeof import('@whiskeysockets/baileys')).WA_CERT_DETAILS;
}

function parseTrust(body: unknown): SimWaWebTrust {
  const trust = body as Partial<SimWaWebTrust> | null;
  const key = typeof trust?.rootPublicKey === 'string' ? Buffer.from(trust.rootPublicKey, 'base64') : null;
  if (!key || key.length !== 32 || !Number.isInteger(trust?.serial)) {
    throw new Error('the emulator answered no usable trust anchor ({rootPublicKey: 32 bytes base64, serial: integer})');
  }
  if (trust!.mediaCa !== undefined && !isCaCertificate(trust!.mediaCa)) {
    throw new Error('the emulator answered no usable trust anchor (mediaCa must be a PEM CA certificate)');
  }
  return { rootPublicKey: trust!.rootPublicKey!, serial: trust!.serial!, ...(trust!.mediaCa ? { mediaCa: trust!.mediaCa } : {}) };
}

function isCaCertificate(pem: unknown): pem is string {
  try {
    return typeof pem === 'string' && new X509Certificate(pem).ca;
  } catch {
    return false;
  }
}

/** Process-wide, test only: TLS to the media host is verified against the system roots plus the emulator's CA. */
export function trustMediaCa(caPem: string): void {
  const ca = [...rootCertificates, caPem];
  https.globalAgent = new https.Agent({ keepAlive: true, ca });
  setGlobalDispatcher(new Agent({ connect: { ca } }));
}

/**
 * Fetches the emulator's test root and makes Baileys trust it. Rejects (the gateway does not start) when the emulator
 * cannot be reached or answers nonsense: a test run against the wrong server should fail at boot, not at every connect.
 */
export async function trustWhatsAppEmulator(
  emulatorUrl: string,
  root: CertificateRoot = baileysCertificateRoot(),
  trustMedia: (caPem: string) => void = trustMediaCa,
): Promise<WhatsAppEmulator> {
  const base = new URL(emulatorUrl);
  let body: unknown;
  try {
    const res = await fetch(new URL(SIM_WA_WEB_TRUST_PATH, base), { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`status ${res.status}`);
    body = await res.json();
  } catch (err) {
    throw new Error(`WHATSAPP_EMULATOR_URL: cannot fetch the emulator's trust anchor from ${base.origin}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const trust = parseTrust(body);
  root.PUBLIC_KEY = Buffer.from(trust.rootPublicKey, 'base64');
  root.SERIAL = trust.serial;
  if (trust.mediaCa) trustMedia(trust.mediaCa);
  const socket = new URL(SIM_WA_WEB_PATH, base);
  socket.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  return {
    trust,
    socketUrl: (sessionId) => {
      const url = new URL(socket);
      url.searchParams.set('sessionId', sessionId);
      return url.toString();
    },
  };
}
