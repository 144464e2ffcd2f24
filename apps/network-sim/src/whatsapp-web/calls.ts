/**
 * Calls over the WhatsApp Web door beyond the offer (contact-messages.ts `callOffer`): the device's rejection, as
 * Baileys' `rejectCall` sends it (`<call from to><reject call-id call-creator count="0"/></call>`, waiting for an
 * answer with the stanza's id), the server's ack of it, and the `terminate` that ends the call once it was rejected
 * (Baileys reports it as a `call` of status `terminate` and forgets the offer).
 */
import { IqError } from './iq';
import { BinaryNode, nowSeconds, SERVER_JID } from './wa-kit';

export interface DeviceCallReject {
  callId: string;
  /** the caller (`call-creator`, else the stanza's `to`) */
  caller: string;
}

/** The device's `<call><reject>`; null for any other call stanza (accept, offer, …: not played by the network). */
export function deviceCallReject(node: BinaryNode): DeviceCallReject | null {
  if (node.tag !== 'call' || !Array.isArray(node.content)) return null;
  const reject = (node.content as BinaryNode[]).find((c) => c.tag === 'reject');
  const callId = reject?.attrs['call-id'];
  const caller = reject?.attrs['call-creator'] ?? node.attrs.to;
  return callId && caller ? { callId, caller } : null;
}

/**
 * The server's answer to a call stanza of the device: `<ack class="call" type=<what it did> id>`, with an `<error code
 * text>` child when the network refused it (Baileys' query throws on that child, its `data` the code).
 */
export function callStanzaAck(node: BinaryNode, error: IqError | null): BinaryNode {
  const first = Array.isArray(node.content) ? (node.content[0] as BinaryNode | undefined) : undefined;
  return {
    tag: 'ack',
    attrs: { id: node.attrs.id ?? '', class: 'call', from: SERVER_JID, ...(first ? { type: first.tag } : {}) },
    ...(error ? { content: [{ tag: 'error', attrs: { code: String(error.code), text: error.text } }] } : {}),
  };
}

/** `<call from id t><terminate call-id call-creator/></call>`: the call is over (the caller's phone hung up after the rejection). */
export function callTerminate(id: string, call: DeviceCallReject): BinaryNode {
  return {
    tag: 'call',
    attrs: { from: call.caller, id, t: nowSeconds() },
    content: [{ tag: 'terminate', attrs: { 'call-id': call.callId, 'call-creator': call.caller } }],
  };
}
