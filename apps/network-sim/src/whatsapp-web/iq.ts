/**
 * What every IQ answer is made of: the error it throws, what it may read (IqContext), the node helpers, and how it
 * plays one of the network's operations with the model's refusals in WhatsApp's words (requestFor, act). Its own room
 * so that each area's table (account-iqs.ts, media-host.ts, app-state.ts) and stanzas.ts, which gathers them, share it
 * without importing each other.
 */
import { DomainError, type SessionActionArgs, type SessionActionName, type SessionActionResult, type SimDeviceOp, type SimDeviceOps } from '@app/contracts';
import type { DeviceLink, SimNetwork } from '../sim-network';
import type { CompanionRegistration } from './directory';
import type { SignalContact } from './signal-party';
import type { BinaryNode } from './wa-kit';

export class IqError extends Error {
  constructor(
    readonly code: number,
    readonly text: string,
  ) {
    super(`${code} ${text}`);
  }
}

/**
 * What an answer may read: the asking device, and the contacts (by `…@s.whatsapp.net` or `…@lid` jid). Answers that
 * read or change the network's model (an area's table) get it with the session and its link; unit tests may leave
 * them out.
 */
export interface IqContext {
  device: CompanionRegistration;
  /** the device's account: phone number and lid user */
  account: { phoneNumber: string; lidUser: string } | null;
  contact(jid: string): SignalContact | null;
  network?: SimNetwork;
  sessionId?: string;
  link?: DeviceLink;
}

export type IqAnswer = (iq: BinaryNode, ctx: IqContext) => BinaryNode[] | undefined;

export function children(node: BinaryNode | undefined): BinaryNode[] {
  return Array.isArray(node?.content) ? (node.content as BinaryNode[]) : [];
}

export function child(node: BinaryNode | undefined, tag: string): BinaryNode | undefined {
  return children(node).find((c) => c.tag === tag);
}

/** A node's bytes (a string content as UTF-8), or undefined when it holds none. */
export function bufferOf(node: BinaryNode | undefined): Buffer | undefined {
  const content = node?.content;
  if (content instanceof Uint8Array) return Buffer.from(content);
  if (typeof content === 'string') return Buffer.from(content, 'utf8');
  return undefined;
}

/** The asking device as the network knows it: what an answer needs to play one of the model's operations. */
export interface IqDevice {
  network?: SimNetwork;
  sessionId?: string;
  link?: DeviceLink;
}

/**
 * One of SimNetwork's device requests for the asking device (the operation the `sim` door plays), its refusals in
 * WhatsApp's words: `not_found` 404, `conflict` 409 (401 when the asker is no admin of the group), `validation_error`
 * 400. Anything else is not the model's answer: it stays as it is and the IQ is answered 500 (iqReply).
 */
export function requestFor<K extends SimDeviceOp>(device: IqDevice, op: K, args: SimDeviceOps[K]['args']): SimDeviceOps[K]['result'] {
  const { network, sessionId, link } = device;
  if (!network || !sessionId || !link) throw new IqError(401, 'not-authorized');
  try {
    return network.request(sessionId, link, op, args);
  } catch (err) {
    throw iqErrorOf(err);
  }
}

/** One of the session actions (actions/, SessionActionMap) for the asking device, through requestFor. */
export function act<A extends SessionActionName>(device: IqDevice, action: A, args: SessionActionArgs<A>): SessionActionResult<A> {
  return requestFor(device, 'action', { action, args }) as SessionActionResult<A>;
}

function iqErrorOf(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  if (err.code === 'not_found') return new IqError(404, 'item-not-found');
  if (err.code === 'conflict') return err.details.reason === 'not_admin' ? new IqError(401, 'not-authorized') : new IqError(409, 'conflict');
  if (err.code === 'validation_error') return new IqError(400, 'bad-request');
  return new IqError(500, 'internal-server-error');
}
