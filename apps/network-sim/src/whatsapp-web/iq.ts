/**
 * What every IQ answer is made of: the error it throws, what it may read (IqContext) and the node helpers. Its own room
 * so that each area's table (account-iqs.ts, media-host.ts, app-state.ts) and stanzas.ts, which gathers them, share it
 * without importing each other.
 */
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
