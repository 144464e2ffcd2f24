/**
 * The one router of the IQs a WhatsApp Web device sends, keyed by namespace (`xmlns`): the namespaces with a room of
 * their own (the companion's `md`, groups' `w:g2`, app state's `w:sync:app:state`, and `w:profile:picture`, which
 * is a group's when its target is a group) and every other namespace from the answer tables (stanzas.ts gathers the
 * routine, account and media tables, keyed `<xmlns> <type> <first child>`; an IQ no table knows is answered 501).
 * Each route gives the content of the result IQ, at once or later, or throws an IqError; the router sends the
 * result or error IQ, and logs the errors. The device's `result` and `error` IQs answer the server's own IQs.
 */
import { answerAppStateIq } from './app-state-door';
import { answerGroupIq, answerGroupPictureIq, isGroupJid } from './groups';
import { IqContext, IqError } from './iq';
import { child, iqKey, iqReply, tableAnswer } from './stanzas';
import type { OpenDevice, WaSocket } from './wa-socket';
import type { BinaryNode } from './wa-kit';

type IqContent = BinaryNode[] | undefined;
type IqRoute = (iq: BinaryNode, socket: WaSocket) => IqContent | Promise<IqContent>;

/** What the device must be for this route: logged in (401 otherwise), as group IQs need. */
const whenOpen =
  (answer: (iq: BinaryNode, device: OpenDevice) => IqContent): IqRoute =>
  (iq, socket) => {
    const device = socket.openDevice();
    if (!device) throw new IqError(401, 'not-authorized');
    return answer(iq, device);
  };

/** Every namespace without a room of its own: the answer tables. */
const fromTables: IqRoute = (iq, socket) => tableAnswer(iq, iqContext(socket));

const IQ_ROUTES: Record<string, IqRoute> = {
  md: (iq, socket) => socket.pairing.answerMd(iq),
  'w:g2': whenOpen(answerGroupIq),
  'w:profile:picture': (iq, socket) => (isGroupJid(iq.attrs.target) ? whenOpen(answerGroupPictureIq)(iq, socket) : fromTables(iq, socket)),
  'w:sync:app:state': answerAppStateIq,
};

/** What the socket does once an IQ is answered (whatever the answer). */
const AFTER_ANSWER: Record<string, (socket: WaSocket) => void> = {
  // the device's pre-keys: the phone can share the app state key with it, and what waited for them goes out
  'encrypt set registration': (socket) => socket.preKeysUploaded(),
};

/** One IQ of the device, answered on its route; `result` and `error` IQs are the device's answers to the server's. */
export function routeIq(socket: WaSocket, iq: BinaryNode): void {
  const { type, xmlns } = iq.attrs;
  if (type === 'result' || type === 'error') return socket.pairing.replied(iq);
  // only the companion's own `md` IQs come before its registration is known (the socket is closing then)
  if (xmlns !== 'md' && !socket.registration) return void socket.deps.logger?.debug({ sessionId: socket.sessionId, iq: iqKey(iq) }, 'whatsapp web iq of an unknown device not answered');
  const reply = answer(iq, socket, IQ_ROUTES[xmlns ?? ''] ?? fromTables);
  if (reply instanceof Promise) void reply.then((r) => sendReply(socket, iq, r));
  else sendReply(socket, iq, reply);
}

/** The result or error IQ, now or once the route's answer is ready. */
function answer(iq: BinaryNode, socket: WaSocket, route: IqRoute): BinaryNode | Promise<BinaryNode> {
  let content: IqContent | Promise<IqContent>;
  try {
    content = route(iq, socket);
  } catch (err) {
    return iqReply(iq, () => { throw err; });
  }
  if (!(content instanceof Promise)) return iqReply(iq, () => content as IqContent);
  return content.then(
    (done) => iqReply(iq, () => done),
    (err) => iqReply(iq, () => { throw err; }),
  );
}

function sendReply(socket: WaSocket, iq: BinaryNode, reply: BinaryNode): void {
  const key = iqKey(iq);
  if (reply.attrs.type === 'error') socket.deps.logger?.debug({ sessionId: socket.sessionId, iq: key, reply: child(reply, 'error')?.attrs }, 'whatsapp web iq answered with an error');
  socket.send(reply);
  AFTER_ANSWER[key]?.(socket);
}

/** What the answer tables may read: the asking device, its account, the contacts, and the network for its operations. */
function iqContext(socket: WaSocket): IqContext {
  const device = socket.registration!;
  const account = device.credential?.account;
  return {
    device,
    account: account ? { phoneNumber: account.phoneNumber, lidUser: account.lid.split('@')[0] } : null,
    contact: (jid) => socket.deps.directory.contact(jid, socket.lidOf),
    network: socket.deps.network,
    sessionId: socket.sessionId,
    link: socket.link,
  };
}
