/**
 * App state on one WhatsApp Web socket (the server and its model: app-state.ts): the phone shares the account's app
 * state sync key with the device once it has pre-keys, tells it which collections to resync (`server_sync`), writes
 * the patches of what changed elsewhere, and answers the device's `w:sync:app:state` IQs.
 */
import type { LabelUpdatePayload, SimChatChange } from '@app/contracts';
import { AppStateCollectionName, appStateOf } from './app-state';
import { newStanzaId } from './contact-messages';
import { child, children, IqError } from './iq';
import type { WaSocket } from './wa-socket';
import { BinaryNode, nowSeconds, SERVER_JID } from './wa-kit';

/**
 * The account's phone (device 0, a Signal party of the account's own number) shares the app state sync key with the
 * device (`appStateSyncKeyShare`); once the device took it (its receipt), the server tells it of the collections that
 * hold patches (`server_sync`), which the device resyncs. The caller shares it once per socket, after the pre-keys.
 */
export function shareAppStateKey(socket: WaSocket): void {
  const registration = socket.registration!;
  const device = socket.openDevice()!;
  const { baileys, network, logger } = socket.deps;
  const appState = appStateOf(network, baileys);
  const deviceIndex = registration.deviceIndex!;
  socket.outbound.queue('sharing the app state key failed', async () => {
    const phone = appState.phoneOf(device.account);
    const plaintext = baileys.encodeWAMessage(appState.keyShareMessage(device.account.phoneNumber, deviceIndex) as never);
    const enc = await phone.encryptFor(device.account.phoneNumber, deviceIndex, plaintext, () => registration.keyBundle);
    socket.tellPreKeysLow();
    if (!enc) return;
    await appState.prepare(device);
    const id = newStanzaId();
    socket.ledger.onTaken(id, () => {
      const collections = appState.filled(socket.sessionId);
      logger?.debug({ sessionId: socket.sessionId, collections }, 'app state key taken: server_sync');
      socket.outbound.queue('telling the device to resync failed', () => tellServerSync(socket, collections));
    });
    socket.send({
      tag: 'message',
      attrs: { from: device.account.jid, type: 'text', id, t: nowSeconds(), category: 'peer' },
      content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext }],
    });
  });
}

/**
 * `<notification type="server_sync">`, one per collection (Baileys reads the first): the device resyncs it. For a
 * network event (`eventId`), the network forgets it once the device acked every notification.
 */
export function tellServerSync(socket: WaSocket, collections: AppStateCollectionName[], eventId?: string): void {
  const notifications = collections.map((name) => ({
    tag: 'notification',
    attrs: { from: SERVER_JID, type: 'server_sync', id: socket.newId(), t: nowSeconds() },
    content: [{ tag: 'collection', attrs: { name, version: '0' } }],
  }));
  if (eventId) socket.ledger.expect(eventId, notifications.map((n) => ['notification', n.attrs.id]));
  for (const notification of notifications) socket.send(notification);
}

/**
 * The phone changed a chat (`POST /sim/sessions/{id}/chat`) or a label was changed elsewhere: the phone writes the
 * patch and the device is told to resync. The device's own upload coming back from the model is no news to it.
 */
export function phoneAppStateChange(socket: WaSocket, eventId: string, changes: Array<{ chat: SimChatChange } | { label: LabelUpdatePayload }>): void {
  const device = socket.openDevice();
  const { baileys, network, logger } = socket.deps;
  const appState = appStateOf(network, baileys);
  if (!device || appState.isOwnUpload(socket.sessionId)) {
    if (device) network.ack(socket.sessionId, socket.link, eventId);
    return;
  }
  void appState
    .phoneChange(device, changes)
    .then((collections) => socket.outbound.queue('telling the device to resync failed', () => tellServerSync(socket, collections, eventId)))
    .catch((err) => logger?.warn({ err, sessionId: socket.sessionId }, "writing the phone's app state patch failed"));
}

/** A `w:sync:app:state` IQ: the content of its result once the patch is decoded and applied (app-state.ts). */
export async function answerAppStateIq(iq: BinaryNode, socket: WaSocket): Promise<BinaryNode[]> {
  const device = socket.openDevice();
  const collections = children(child(iq, 'sync')).map((c) => `${c.attrs.name}@${c.attrs.version}${child(c, 'patch') ? '+patch' : ''}`);
  try {
    if (!device) throw new IqError(401, 'not-authorized');
    const content = await appStateOf(socket.deps.network, socket.deps.baileys).answer(iq, device);
    socket.deps.logger?.debug({ sessionId: socket.sessionId, collections }, 'app state iq answered');
    return content;
  } catch (err) {
    socket.deps.logger?.debug({ sessionId: socket.sessionId, collections, error: err instanceof IqError ? err.message : String(err) }, 'app state iq answered');
    throw err;
  }
}
