import { decodeBinaryJson, encodeBinaryJson } from '../binary-json';
import type { EngineEvent } from '../engine.interface';

/**
 * An engine event as the inbound spool keeps it: JSON whose binary values (a message's `raw` content) are base64
 * (../binary-json.ts, the auth state's encoding too), tagged with the connection that spooled it and its place in
 * that connection's sequence, so a replay on that connection leaves the entries its own hand-over has not reached yet.
 */
export interface SpooledEngineEvent {
  /** the connection that received it */
  origin: string;
  /** its number in that connection's sequence (1, 2, …) */
  seq: number;
  event: EngineEvent;
}

const VERSION = 1;

export function encodeSpooledEvent(origin: string, seq: number, event: EngineEvent): string {
  return encodeBinaryJson({ v: VERSION, origin, seq, event });
}

export function decodeSpooledEvent(payload: string): SpooledEngineEvent {
  const decoded = decodeBinaryJson<{ v?: unknown; origin?: unknown; seq?: unknown; event?: { type?: unknown } }>(payload);
  if (decoded?.v !== VERSION || typeof decoded.origin !== 'string' || typeof decoded.seq !== 'number' || typeof decoded.event?.type !== 'string') {
    throw new Error(`not a spooled engine event of version ${VERSION}`);
  }
  return { origin: decoded.origin, seq: decoded.seq, event: decoded.event as EngineEvent };
}
