import { decodeAuthValue, encodeAuthValue } from '../../auth-state/auth-state-json';
import type { EngineEvent } from '../engine.interface';

/**
 * An engine event as the inbound spool keeps it: JSON whose binary values (a message's `raw` content) are base64
 * (the auth state's binary JSON, one encoding for both), tagged with the connection that spooled it, so the replay
 * on that connection's open leaves its own live entries to its own hand-over.
 */
export interface SpooledEngineEvent {
  /** the connection that received it */
  origin: string;
  event: EngineEvent;
}

const VERSION = 1;

export function encodeSpooledEvent(origin: string, event: EngineEvent): string {
  return encodeAuthValue({ v: VERSION, origin, event });
}

export function decodeSpooledEvent(payload: string): SpooledEngineEvent {
  const decoded = decodeAuthValue<{ v?: unknown; origin?: unknown; event?: { type?: unknown } }>(payload);
  if (decoded?.v !== VERSION || typeof decoded.origin !== 'string' || typeof decoded.event?.type !== 'string') {
    throw new Error(`not a spooled engine event of version ${VERSION}`);
  }
  return { origin: decoded.origin, event: decoded.event as EngineEvent };
}
