import type { GroupInfo } from './sessions';

/**
 * Device protocol between the gateway's `sim` engine and the network simulator (apps/network-sim):
 * a WebSocket at `GET /device?sessionId=<id>` carrying one JSON object per text frame.
 * The device speaks first (`hello`, with its stored credential or null); everything else follows from the network.
 */
export const SIM_DEVICE_PATH = '/device';

/** The account a paired device is attached to. */
export interface SimAccount {
  /** `<digits>@s.whatsapp.net` */
  jid: string;
  /** `<digits>@lid`, stable per phone number for the simulator's lifetime */
  lid: string;
  /** digits only */
  phoneNumber: string;
}

/** What the engine stores through `AuthStateStore.writeCreds`; presented again in `hello` to resume without a QR. */
export interface SimCredential {
  kind: 'sim-device';
  token: string;
  account: SimAccount;
}

export interface SimInboundMessage {
  id: string;
  from: string;
  chatJid: string;
  text: string;
  timestamp: number;
}

/** participants: member jids, the owner first (as WhatsApp lists the creator among the participants). */
export interface SimGroup extends GroupInfo {
  sessionId: string;
  createdAt: number;
}

export interface SimSentMessage {
  id: string;
  sessionId: string;
  from: string;
  to: string;
  text: string;
  timestamp: number;
}

/** Requests a connected device may make, with their arguments and results. */
export interface SimDeviceOps {
  requestPairingCode: { args: { phoneNumber: string }; result: { code: string } };
  createGroup: { args: { subject: string; participants: string[] }; result: SimGroup };
  sendText: { args: { to: string; text: string }; result: { messageId: string } };
  /** Unlinks the device; the network answers, then closes the socket with `loggedOut`. */
  logout: { args: Record<string, never>; result: Record<string, never> };
}
export type SimDeviceOp = keyof SimDeviceOps;

/** device → network */
export type SimDeviceFrame =
  | { type: 'hello'; credential: unknown }
  | { [K in SimDeviceOp]: { type: 'request'; id: number; op: K; args: SimDeviceOps[K]['args'] } }[SimDeviceOp]
  /** The device has taken an inbound message; until then the network re-sends it on every open. */
  | { type: 'ack'; messageId: string };

/** network → device */
export type SimNetworkFrame =
  | { type: 'qr'; qr: string; expiresAt: number }
  /** First pairing (QR scan or pairing code): store the credential, the device is open. */
  | { type: 'paired'; credential: SimCredential }
  /** Resumed with a valid stored credential. */
  | { type: 'open'; account: SimAccount }
  | { type: 'message'; message: SimInboundMessage }
  | { type: 'response'; id: number; ok: true; result: unknown }
  | { type: 'response'; id: number; ok: false; error: { code: string; message: string; details: Record<string, unknown> } };

/**
 * WebSocket close codes the network uses; a transient drop is an abrupt end of the socket (1006), as on a real network.
 * The last three digits echo the WhatsApp/Baileys status code the engine reports.
 */
export const SIM_CLOSE_CODES = {
  /** malformed frame or hello */
  protocolError: 4400,
  /** the credential was revoked (unlink, logout) or is unknown to the network */
  loggedOut: 4401,
  /** another connection took over the device */
  replaced: 4440,
  /** the stored credential is not a simulator credential */
  badSession: 4500,
} as const;
