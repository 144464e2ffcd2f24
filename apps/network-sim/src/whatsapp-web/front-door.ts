/**
 * The WhatsApp Web front door of the network simulator (CONTRACT 9): `ws://<sim>/ws/chat?sessionId=<id>` speaks
 * WhatsApp Web's protocol as Baileys 7.0.0-rc14 expects it, over the same SimNetwork as the `sim` engine's door,
 * and `GET /sim/whatsapp-web/trust` hands out the test root key its certificate chain is signed with.
 *
 * Which session is a socket? Baileys never sends our session id, so the test seam (WHATSAPP_EMULATOR_URL in the
 * gateway) appends `?sessionId=<id>` to the socket URL; on login the device's Noise key must belong to that session.
 *
 * The control API's `scan` and `pair-code` on a WhatsApp Web device come here first: the phone needs what the screen
 * shows (the QR, whose adv secret the network never sees; the code Baileys drew itself), then SimNetwork pairs as usual.
 */
import { DomainError, SimWaWebTrust } from '@app/contracts';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { keepSocketAlive } from '../keepalive';
import { validation } from '../sim-input';
import type { DeviceView, SimNetwork } from '../sim-network';
import { CertifiedServer, certifyServer } from './certificates';
import { WaWebConnection } from './connection';
import { WaDirectory } from './directory';
import { attachMediaHost, MediaHost } from './media-server';
import { parseQr } from './phone';
import { PrelinkedDevice, prelinkDevice } from './prelink';
import { loadBaileys } from './wa-kit';

type ControlBody = Record<string, unknown>;

export class WhatsAppWebFrontDoor {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly directory = new WaDirectory(loadBaileys);
  /** the latest WhatsApp Web socket of each session */
  private readonly connections = new Map<string, WaWebConnection>();
  private certified: CertifiedServer | null = null;
  /** the media host (media-server.ts), started with the door; `media_conn` names it once it listens */
  private readonly mediaHost: Promise<MediaHost>;

  constructor(
    private readonly network: SimNetwork,
    private readonly logger?: Logger,
    /** the network's keepalive on every socket (keepalive.ts, `SIM_KEEPALIVE_MS`) */
    private readonly options: { keepaliveMs?: number } = {},
  ) {
    this.mediaHost = MediaHost.start(logger).then((host) => {
      attachMediaHost(network, host);
      return host;
    });
    this.mediaHost.catch((err) => logger?.error({ err }, 'the whatsapp web media host did not start'));
  }

  /** The test root key and serial a client must trust (Baileys' WA_CERT_DETAILS), and the media host with its CA. */
  async trust(): Promise<SimWaWebTrust> {
    const host = await this.mediaHost;
    return { ...this.server().trust, mediaCa: host.caPem, mediaHost: host.hostname };
  }

  handleUpgrade(req: IncomingMessage, socket: Socket, head: Buffer, sessionId: string): void {
    const server = this.server();
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = new WaWebConnection({ baileys: loadBaileys(), server, network: this.network, directory: this.directory, sessionId, ws, logger: this.logger });
      this.connections.set(sessionId, connection);
      keepSocketAlive(ws, this.options.keepaliveMs, () => connection.silenced);
      ws.on('close', () => {
        if (this.connections.get(sessionId) === connection) this.connections.delete(sessionId);
      });
    });
  }

  /** Benchmarks only: a device linked without its screen (prelink.ts); the caller checks SIM_TEST_PRELINK. */
  prelink(body: ControlBody): PrelinkedDevice {
    return prelinkDevice(this.network, this.directory, loadBaileys(), body);
  }

  /** The control action's handler when the session is a WhatsApp Web device and the action needs the phone here. */
  sessionAction(sessionId: string, action: string): ((body: ControlBody) => Promise<DeviceView>) | undefined {
    const connection = this.connections.get(sessionId);
    if (!connection) return undefined;
    if (action === 'scan') return async (body) => this.scan(connection, body);
    if (action === 'pair-code') return (body) => this.enterCode(connection, body);
    return undefined;
  }

  close(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    void this.mediaHost.then((host) => host.close()).catch(() => undefined);
  }

  private scan(connection: WaWebConnection, body: ControlBody): DeviceView {
    if (typeof body.qr !== 'string') {
      throw validation('qr', 'is required for a WhatsApp Web device: its QR carries a secret only the screen shows (GET /sessions/{id}/qr)');
    }
    const scanned = parseQr(body.qr);
    if (!scanned) throw validation('qr', 'is not a WhatsApp Web QR code');
    connection.acceptScan(scanned);
    // the history the phone plays on pairing (CONTRACT 12) reaches the device once it logged in (network-frames.ts)
    return this.network.scan(connection.sessionId, { phoneNumber: body.phoneNumber, history: body.history, isBusiness: body.isBusiness });
  }

  private async enterCode(connection: WaWebConnection, body: ControlBody): Promise<DeviceView> {
    if (typeof body.code !== 'string' || !/^[A-Za-z0-9]{8}$/.test(body.code.replace(/[\s-]/g, ''))) {
      throw validation('code', 'must be the 8-character pairing code the device shows');
    }
    const phoneNumber = await connection.acceptCode(body.code.replace(/[\s-]/g, '').toUpperCase());
    if (this.connections.get(connection.sessionId) !== connection) throw new DomainError('conflict', 'the device disconnected', {});
    return this.network.scan(connection.sessionId, { phoneNumber });
  }

  private server(): CertifiedServer {
    this.certified ??= certifyServer(loadBaileys());
    return this.certified;
  }
}
