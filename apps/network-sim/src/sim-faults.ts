import { DomainError, SIM_CLOSE_CODES, SIM_FAULT_KINDS, SimFaultKind } from '@app/contracts';
import type { DeviceLink, DeviceView, SimNetwork } from './sim-network';

/**
 * The fault control call (CONTRACT 9): `POST /sim/sessions/{id}/fault {kind}` makes the network misbehave toward the
 * device's current connection once, as WhatsApp does, so a gateway's reaction to each close can be proven end to end.
 * This file owns only the mapping from a fault to what the network does; the device's state stays in SimNetwork.
 *
 * | kind | the network | Baileys would report |
 * |---|---|---|
 * | drop | ends the socket abruptly | 428 / a socket error |
 * | silent | stops answering (no frames, no pongs), the socket stays open | 408 "Connection was lost" (keep-alive) |
 * | stream-error-515 | close `restartRequired` | 515 restart required |
 * | stream-error-ack | close `streamError` | 500 (`<stream:error><ack/>`, no code) |
 * | conflict | close `replaced` | 440 replaced |
 * | failure-401 | forgets the device, close `loggedOut` | 401 |
 * | failure-403 | close `forbidden` | 403 |
 * | failure-405 | close `clientVersionRefused` | 405 |
 *
 * The WhatsApp Web door plays each kind as its own stanza (whatsapp-web/faults.ts, `DeviceLink.fault`).
 */
const FAULTS: Record<SimFaultKind, { end: (link: DeviceLink) => void; forgetDevice?: boolean }> = {
  drop: { end: (link) => link.drop() },
  silent: { end: (link) => silence(link) },
  'stream-error-515': { end: (link) => link.close(SIM_CLOSE_CODES.restartRequired, 'stream error: restart required') },
  'stream-error-ack': { end: (link) => link.close(SIM_CLOSE_CODES.streamError, 'stream error: ack') },
  conflict: { end: (link) => link.close(SIM_CLOSE_CODES.replaced, 'stream error: conflict (replaced)') },
  'failure-401': { end: (link) => link.close(SIM_CLOSE_CODES.loggedOut, 'failure: logged out'), forgetDevice: true },
  'failure-403': { end: (link) => link.close(SIM_CLOSE_CODES.forbidden, 'failure: forbidden') },
  'failure-405': { end: (link) => link.close(SIM_CLOSE_CODES.clientVersionRefused, 'failure: client version refused') },
};

function silence(link: DeviceLink): void {
  if (!link.silence) throw new DomainError('not_implemented', 'this connection cannot be silenced', { kind: 'silent' });
  link.silence();
}

export function parseFaultKind(body: Record<string, unknown>): SimFaultKind {
  const kind = body.kind;
  const extra = Object.keys(body).filter((key) => key !== 'kind');
  if (extra.length > 0) throw new DomainError('validation_error', 'unknown fields', { fields: extra });
  if (typeof kind !== 'string' || !(SIM_FAULT_KINDS as readonly string[]).includes(kind)) {
    throw new DomainError('validation_error', `kind must be one of ${SIM_FAULT_KINDS.join(', ')}`, { kind: kind ?? null, allowed: SIM_FAULT_KINDS });
  }
  return kind as SimFaultKind;
}

/** 200 the device's view after the fault; 404 unknown device, 409 not connected, 422 an unknown kind. */
export function applyFault(network: SimNetwork, sessionId: string, body: Record<string, unknown>): DeviceView & { fault: SimFaultKind } {
  const kind = parseFaultKind(body);
  const { end, forgetDevice } = FAULTS[kind];
  // a door with its own protocol (WhatsApp Web) says the fault its way; the network's side (offline, forgotten) is the same
  const play = (link: DeviceLink) => (link.fault ? link.fault(kind) : end(link));
  return { ...network.endConnection(sessionId, play, { forgetDevice }), fault: kind };
}
