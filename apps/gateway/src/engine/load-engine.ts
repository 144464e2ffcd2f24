import type { EventSpool } from '@app/messaging';
import type { SessionEngine } from './engine.interface';

export interface EngineChoice {
  GATEWAY_ENGINE: 'baileys' | 'sim';
  NETWORK_SIM_URL: string;
  WHATSAPP_WEB_URL?: string;
}

/**
 * Loads only the engine this node runs: Baileys is a large ESM module, so a gateway on `sim`
 * (tests, demo) never loads it, and nothing jest imports pulls it in.
 */
export function loadEngine(config: EngineChoice, parts: { spool?: EventSpool } = {}): SessionEngine {
  if (config.GATEWAY_ENGINE === 'sim') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { SimEngine } = require('./sim/sim.engine') as typeof import('./sim/sim.engine');
    return new SimEngine({ simUrl: config.NETWORK_SIM_URL });
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { BaileysEngine } = require('./baileys/baileys.engine') as typeof import('./baileys/baileys.engine');
  // the spool is the Baileys engine's alone: the simulator redelivers what was not acknowledged itself
  return new BaileysEngine({ ...(config.WHATSAPP_WEB_URL ? { waWebSocketUrl: config.WHATSAPP_WEB_URL } : {}), spool: parts.spool });
}
