/**
 * Answers to the IQs a logged-in Baileys (rc14) sends on its own: pre-key count and upload, key-bundle digest,
 * signed pre-key rotation, passive/active, keepalive pings, props, blocklist, privacy, stats and usync. Each is
 * answered as WhatsApp answers it, or (anything not listed) with a 501 error, which Baileys logs and tolerates.
 *
 * To add a stanza: add an entry to IQ_ANSWERS keyed `<xmlns> <type> <first child tag>`; it gets the IQ and the
 * session's registration and returns the content of the result IQ (or throws an IqError).
 */
import type { CompanionRegistration } from './directory';
import { BinaryNode, SERVER_JID } from './wa-kit';

export class IqError extends Error {
  constructor(
    readonly code: number,
    readonly text: string,
  ) {
    super(`${code} ${text}`);
  }
}

export type IqAnswer = (iq: BinaryNode, device: CompanionRegistration) => BinaryNode[] | undefined;

export function children(node: BinaryNode | undefined): BinaryNode[] {
  return Array.isArray(node?.content) ? (node.content as BinaryNode[]) : [];
}

export function child(node: BinaryNode | undefined, tag: string): BinaryNode | undefined {
  return children(node).find((c) => c.tag === tag);
}

const IQ_ANSWERS: Record<string, IqAnswer> = {
  'encrypt get count': (_iq, device) => [{ tag: 'count', attrs: { value: String(device.preKeyCount) } }],
  'encrypt set registration': (iq, device) => {
    device.preKeyCount += children(child(iq, 'list')).length;
    return undefined;
  },
  // Baileys only checks that a digest comes back (a missing one makes it upload again)
  'encrypt get digest': () => [{ tag: 'digest', attrs: {} }],
  'encrypt set rotate': () => undefined,
  'passive set active': () => undefined,
  'passive set passive': () => undefined,
  'w:p get ping': () => undefined,
  'abt get props': () => [{ tag: 'props', attrs: { protocol: '1' }, content: [] }],
  'blocklist get': () => [{ tag: 'list', attrs: {}, content: [] }],
  'privacy get privacy': () => [{ tag: 'privacy', attrs: {}, content: [] }],
  'w:stats  add': () => undefined,
  'w:stats set add': () => undefined,
  // device lists and contact lookups: nobody is known yet (Signal parties come with the next slice)
  'usync get usync': () => [{ tag: 'usync', attrs: {}, content: [{ tag: 'list', attrs: {}, content: [] }] }],
};

/** The IQ's answer key: `<xmlns> <type> <first child tag>` (missing parts empty). */
export function iqKey(iq: BinaryNode): string {
  const first = children(iq)[0]?.tag ?? '';
  return `${iq.attrs.xmlns ?? ''} ${iq.attrs.type ?? ''} ${first}`.trimEnd();
}

/** The result (or error) IQ for one of the client's routine IQs. */
export function answerIq(iq: BinaryNode, device: CompanionRegistration): BinaryNode {
  const attrs = { id: iq.attrs.id, from: SERVER_JID };
  const answer = IQ_ANSWERS[iqKey(iq)];
  try {
    if (!answer) throw new IqError(501, 'feature-not-implemented');
    const content = answer(iq, device);
    return { tag: 'iq', attrs: { ...attrs, type: 'result' }, ...(content ? { content } : {}) };
  } catch (err) {
    const error = err instanceof IqError ? err : new IqError(500, 'internal-server-error');
    return { tag: 'iq', attrs: { ...attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: String(error.code), text: error.text } }] };
  }
}
