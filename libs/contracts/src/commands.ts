import type { ErrorCode } from './errors';
import type { SessionActionName } from './session-actions';
import type { GroupView, SessionStatus } from './sessions';

/**
 * Command protocol between the API and gateway nodes.
 * Each gateway drains its own BullMQ queue `gateway-commands-<gatewayId>`; the job's
 * return value is the reply. The API waits with a timeout and answers 503
 * gateway_unavailable when no reply comes. The names here (queue, registry, lease and QR keys) are
 * defined once for both sides; only libs/fleet builds keys and queues from them.
 */
export const gatewayCommandQueue = (gatewayId: string) => `gateway-commands-${gatewayId}`;

export interface CommandMap {
  'session.start': { args: { sessionId: string }; result: SessionSnapshot };
  'session.stop': { args: { sessionId: string }; result: SessionSnapshot };
  'session.restart': { args: { sessionId: string }; result: SessionSnapshot };
  'session.logout': { args: { sessionId: string }; result: SessionSnapshot };
  'session.delete': { args: { sessionId: string }; result: { deleted: true } };
  'session.request-code': { args: { sessionId: string; phoneNumber: string }; result: { code: string } };
  'group.create': { args: { sessionId: string; name: string; participants: string[] }; result: GroupView };
  /** one operation of SessionActionMap on a connected session (session-actions.ts); the result is that action's */
  'session.action': { args: { sessionId: string; action: SessionActionName; args: unknown }; result: unknown };
}

export type CommandName = keyof CommandMap;

export interface CommandRequest<N extends CommandName = CommandName> {
  name: N;
  args: CommandMap[N]['args'];
  /** epoch ms after which the gateway must not act on it (the API has answered 503 already). */
  deadline: number;
}

export type CommandReply<N extends CommandName = CommandName> =
  | { ok: true; result: CommandMap[N]['result'] }
  | { ok: false; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

/** What the gateway knows of a session after a lifecycle command. */
export interface SessionSnapshot {
  sessionId: string;
  status: SessionStatus;
}

/** Gateway registry (Redis). */
export interface GatewayInfo {
  id: string;
  capacity: number;
  sessionCount: number;
  startedAt: number;
  lastHeartbeatAt: number;
  engine: string;
  version: string;
  /**
   * The WhatsApp Web version the node's engine announces to WhatsApp (`2.3000.x`: WHATSAPP_WEB_VERSION, fetched, or
   * Baileys' bundled one); null for the `sim` engine and until read. Absent in entries of older gateways.
   */
  waWebVersion?: string | null;
  /**
   * The node's WhatsApp is the network simulator (the `sim` engine, or Baileys against WHATSAPP_EMULATOR_URL): a demo
   * or a test, where no phone can scan a QR and the simulator's control API plays the phone. Absent in older entries.
   */
  simulated?: boolean;
  /** the gateway is handing its sessions to others and takes no new ones (placement skips it) */
  draining: boolean;
}

export const REGISTRY_KEYS = {
  /** hash of gatewayId -> JSON GatewayInfo */
  gateways: 'gateways',
  /** string key with TTL: present while the gateway is alive */
  alive: (gatewayId: string) => `gateway-alive:${gatewayId}`,
  /** session lease: value = `<holder gatewayId>|<fencing token>|<holder's epoch>`, live while that epoch is (leaseNode) */
  lease: (sessionId: string) => `session-lease:${sessionId}`,
  /** a gateway's lease epoch: value = the epoch, PX TTL renewed by the gateway; renews every lease it holds at once */
  leaseNode: (gatewayId: string) => `lease-node:${gatewayId}`,
  /** string key: an operator asked this gateway to drain (`gateway:drain`); the gateway watches it with its heartbeat */
  drainRequest: (gatewayId: string) => `gateway-drain:${gatewayId}`,
} as const;

/**
 * The QR a session currently shows, written by its gateway and read by the API (`GET /sessions/{id}/qr`).
 * Key (under REDIS_KEY_PREFIX) holds JSON SessionQr and expires with the QR.
 */
export const sessionQrKey = (sessionId: string) => `session-qr:${sessionId}`;

export interface SessionQr {
  qr: string;
  /** epoch ms */
  expiresAt: number;
}
