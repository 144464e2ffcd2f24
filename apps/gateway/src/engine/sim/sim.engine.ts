import type { ConnectOptions, EngineConnection, SessionEngine } from '../engine.interface';
import { assertOwnCredential } from '../credentials-unusable';
import { SimConnection } from './sim-connection';

export interface SimEngineOptions {
  /** NETWORK_SIM_URL, e.g. `http://127.0.0.1:4010` */
  simUrl: string;
  /** WebSocket handshake limit; a simulator that does not answer ends in a `transient` close */
  connectTimeoutMs?: number;
  /** How long createGroup/send/sendPresence/markRead/requestPairingCode/logout wait for the network's answer */
  requestTimeoutMs?: number;
  /**
   * The device pings the network this often and ends a connection whose previous ping got no answer (a `transient`
   * close), as Baileys' keep-alive does (NETWORK_SIM_KEEPALIVE_MS; default 15 s; 0 = off).
   */
  keepaliveMs?: number;
}

const DEFAULT_KEEPALIVE_MS = 15_000;

/**
 * The `sim` engine: plays a linked device against the network simulator (apps/network-sim) over its device
 * protocol (`@app/contracts` network-sim). It never reconnects on its own; the SessionRunner calls connect() again.
 */
export class SimEngine implements SessionEngine {
  readonly name = 'sim' as const;

  constructor(private readonly options: SimEngineOptions) {}

  /**
   * Resolves as soon as the socket is being opened, like Baileys' makeWASocket: what happens next (QR, open,
   * a refused connection) arrives through `onEvent`, ending in exactly one `close`.
   */
  async connect(options: ConnectOptions): Promise<EngineConnection> {
    const credential = await options.auth.readCreds();
    // Baileys' credentials are refused here, before the network would (its close 4501): the runner logs the session out
    assertOwnCredential('sim', credential);
    return new SimConnection(
      {
        simUrl: this.options.simUrl,
        connectTimeoutMs: this.options.connectTimeoutMs ?? 10000,
        requestTimeoutMs: this.options.requestTimeoutMs ?? 10000,
        keepaliveMs: this.options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS,
      },
      options,
      credential,
    );
  }

  /** The sim engine keeps nothing for a session between sockets. */
  forget(): void {}
}
