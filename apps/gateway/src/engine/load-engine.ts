import type { TargetAllowList } from '@app/net-guard';
import type { Logger } from 'pino';
import type { EventSpool } from '@app/messaging';
import type { SessionEngine } from './engine.interface';
import type { HeldReceiptsMetrics } from './baileys/held-receipts';

export interface EngineChoice {
  GATEWAY_ENGINE: 'baileys' | 'sim';
  NETWORK_SIM_URL: string;
  NETWORK_SIM_KEEPALIVE_MS: number;
  WHATSAPP_WEB_URL?: string;
  /** test knob: how long Baileys shows each QR (absent: Baileys' own 60 s, then 20 s) */
  BAILEYS_QR_TIMEOUT_MS?: number;
  WHATSAPP_WEB_VERSION_FETCH: boolean;
  WHATSAPP_WEB_VERSION_FETCH_TIMEOUT_MS: number;
  waWebVersion: [number, number, number] | null;
  /** test seam: the simulator's WhatsApp Web front door (whatsapp-emulator.ts) */
  WHATSAPP_EMULATOR_URL?: string;
  /** SESSION_PROXY_ALLOWED, parsed: the private proxies sessions may use */
  sessionProxyAllowList?: TargetAllowList;
}

/**
 * Loads only the engine this node runs: Baileys is a large ESM module, so a gateway on `sim`
 * (tests, demo) never loads it, and nothing jest imports pulls it in.
 */
export async function loadEngine(config: EngineChoice, logger: Logger, parts: { spool?: EventSpool; receiptMetrics?: HeldReceiptsMetrics } = {}): Promise<SessionEngine> {
  if (config.GATEWAY_ENGINE === 'sim') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the engine this node runs is loaded (see above)
    const { SimEngine } = require('./sim/sim.engine') as typeof import('./sim/sim.engine');
    return new SimEngine({ simUrl: config.NETWORK_SIM_URL, keepaliveMs: config.NETWORK_SIM_KEEPALIVE_MS });
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the engine this node runs is loaded (see above)
  const { BaileysEngine } = require('./baileys/baileys.engine') as typeof import('./baileys/baileys.engine');
  // the spool is the Baileys engine's alone: the simulator redelivers what was not acknowledged itself
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the engine this node runs is loaded (see above)
  const { loadBaileysRuntime } = require('./baileys/baileys-runtime') as typeof import('./baileys/baileys-runtime');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the engine this node runs is loaded (see above)
  const { WaWebVersionSource } = require('./baileys/wa-web-version') as typeof import('./baileys/wa-web-version');
  const waWebVersion = new WaWebVersionSource(
    { configured: config.waWebVersion, fetch: config.WHATSAPP_WEB_VERSION_FETCH, fetchTimeoutMs: config.WHATSAPP_WEB_VERSION_FETCH_TIMEOUT_MS, logger },
    () => {
      const runtime = loadBaileysRuntime();
      return {
        bundled: runtime.bundledWaWebVersion!,
        fetchLatest: (signal) => runtime.fetchLatestWaWebVersion!(signal),
      };
    },
  );
  // read at start, so the registry shows the version before the first session connects (the fetch is bounded)
  void waWebVersion.current().catch((err) => logger.error({ err: String(err) }, 'reading the WhatsApp Web version failed'));
  if (config.WHATSAPP_EMULATOR_URL) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the engine this node runs is loaded (see above)
    const { trustWhatsAppEmulator } = require('./baileys/whatsapp-emulator') as typeof import('./baileys/whatsapp-emulator');
    const emulator = await trustWhatsAppEmulator(config.WHATSAPP_EMULATOR_URL);
    return new BaileysEngine({ socketUrlFor: emulator.socketUrl, waWebVersion, spool: parts.spool, receiptMetrics: parts.receiptMetrics, proxyAllowList: config.sessionProxyAllowList, qrTimeoutMs: config.BAILEYS_QR_TIMEOUT_MS });
  }
  return new BaileysEngine({
    ...(config.WHATSAPP_WEB_URL ? { waWebSocketUrl: config.WHATSAPP_WEB_URL } : {}),
    waWebVersion,
    spool: parts.spool,
    receiptMetrics: parts.receiptMetrics,
    proxyAllowList: config.sessionProxyAllowList,
    qrTimeoutMs: config.BAILEYS_QR_TIMEOUT_MS,
  });
}
