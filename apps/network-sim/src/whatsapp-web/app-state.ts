/**
 * App state sync (`w:sync:app:state`) as WhatsApp's server plays it for a WhatsApp Web device: the account's state a
 * device changes with syncd patches (archive, pin, mute, read, labels, push name), each encrypted and MACed with an
 * app state sync key the account's phone shares with its devices (`appStateSyncKeyShare`, app-state-door.ts).
 *
 * The server keeps, per session and collection, the version, the LTHash state and every patch. A resync (`<collection
 * name version>`) gets the patches after the device's version (never a snapshot: that is an external blob); an upload
 * (`<collection version><patch>`) must build on the server's version (409 otherwise), is decoded and verified with
 * Baileys' own functions (decodePatches: patch MAC, value MACs, LTHash snapshot MAC) and its mutations are applied to
 * the model the `sim` door uses (the device's own actions, actions/): a patch that does not verify is refused (400),
 * one the model refuses gets the model's answer (409: labels on a non-business account, 404: no such label).
 *
 * The phone writes patches too: on a device's first sync the account's state (labels of a business account, chat
 * marks, push name), and later what it changes itself (`POST /sim/sessions/{id}/chat`, label edits); the device learns
 * of those with a `server_sync` notification and resyncs, as WhatsApp tells linked devices.
 */
import { type LabelUpdatePayload, type SimChatChange } from '@app/contracts';
import { randomBytes, randomInt } from 'node:crypto';
import type { DeviceLink, SimNetwork } from '../sim-network';
import { SignalContact } from './signal-party';
import { act, child, children, IqError } from './iq';
import type { Baileys, BinaryNode } from './wa-kit';

// no entry in the IQ tables: decoding a patch is asynchronous (Baileys' decodePatches) and those answer synchronously,
// so iq-router.ts routes `w:sync:app:state` to AppStateServer.answer (app-state-door.ts)

type LTHashState = ReturnType<Baileys['newLTHashState']>;
type PatchCreate = Parameters<Baileys['encodeSyncdPatch']>[0];
type ChatMutation = { syncAction: { value?: SyncActionValue | null }; index: string[] };
type Numeric = number | { toNumber(): number } | null | undefined;
interface SyncActionValue {
  archiveChatAction?: { archived?: boolean | null } | null;
  pinAction?: { pinned?: boolean | null } | null;
  muteAction?: { muted?: boolean | null; muteEndTimestamp?: Numeric } | null;
  markChatAsReadAction?: { read?: boolean | null } | null;
  labelAssociationAction?: { labeled?: boolean | null } | null;
  labelEditAction?: { name?: string | null } | null;
  pushNameSetting?: { name?: string | null } | null;
}

/** What the phone writes a patch for: a chat's marks, a label (edited, deleted, put on or taken off a chat), the push name. */
type PhoneChange = { chat: SimChatChange } | { label: LabelUpdatePayload } | { pushName: string };

/** WhatsApp's app state collections (Baileys' ALL_WA_PATCH_NAMES). */
export const APP_STATE_COLLECTIONS = ['critical_block', 'critical_unblock_low', 'regular_high', 'regular', 'regular_low'] as const;
export type AppStateCollectionName = (typeof APP_STATE_COLLECTIONS)[number];

/** WhatsApp's "muted for ever": 9999-12-31. */
const MUTED_FOR_EVER = 253402214400000;

interface Collection {
  state: LTHashState;
  /** patches[i] is version i + 1, encoded (SyncdPatch with its version) */
  patches: Uint8Array[];
}

/** One app state sync key of an account (AppStateSyncKeyData): made by its phone, shared with each device. */
export interface AppStateKey {
  keyId: Buffer;
  keyData: Buffer;
  fingerprint: { rawId: number; currentIndex: number; deviceIndexes: number[] };
  timestamp: number;
}

/** The device an app state IQ comes from: its session on the network and its account. */
export interface AppStateDevice {
  network: SimNetwork;
  sessionId: string;
  link: DeviceLink;
  account: { jid: string; lid: string; phoneNumber: string };
}

const SERVERS = new WeakMap<SimNetwork, AppStateServer>();

/** The app state server of a network (one per simulator). */
export function appStateOf(network: SimNetwork, baileys: Baileys): AppStateServer {
  let server = SERVERS.get(network);
  if (!server) SERVERS.set(network, (server = new AppStateServer(baileys)));
  return server;
}

function isCollection(name: string | undefined): name is AppStateCollectionName {
  return (APP_STATE_COLLECTIONS as readonly string[]).includes(name ?? '');
}

function bytesOf(node: BinaryNode | undefined): Uint8Array | null {
  return node?.content instanceof Uint8Array ? node.content : null;
}

export class AppStateServer {
  /** phone number → the account's key */
  private readonly keys = new Map<string, AppStateKey>();
  /** phone number → the account's phone as a Signal party (device 0), which shares the key */
  private readonly phones = new Map<string, SignalContact>();
  /** session id → collection → its state and patches */
  private readonly sessions = new Map<string, Map<AppStateCollectionName, Collection>>();
  /** session id → its app state work, one IQ or phone change at a time */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** the session whose upload the model is applying now (its own changes come back as network frames) */
  private applying: string | null = null;

  constructor(private readonly baileys: Baileys) {}

  /** The account's app state sync key (made by its phone on first use). */
  keyOf(phoneNumber: string): AppStateKey {
    let key = this.keys.get(phoneNumber);
    if (!key) {
      key = {
        keyId: Buffer.concat([Buffer.alloc(2), randomBytes(4)]),
        keyData: randomBytes(32),
        fingerprint: { rawId: randomInt(1, 2 ** 31), currentIndex: 0, deviceIndexes: [0] },
        timestamp: Date.now(),
      };
      this.keys.set(phoneNumber, key);
    }
    return key;
  }

  /** The account's phone (its primary device, 0) as a Signal party: it writes the key share to each device. */
  phoneOf(account: { jid: string; lid: string; phoneNumber: string }): SignalContact {
    let phone = this.phones.get(account.phoneNumber);
    if (!phone) this.phones.set(account.phoneNumber, (phone = new SignalContact(account.jid, account.lid)));
    return phone;
  }

  /** The phone's `protocolMessage` sharing the account's key with device `deviceIndex`. */
  keyShareMessage(phoneNumber: string, deviceIndex: number) {
    const key = this.keyOf(phoneNumber);
    const fingerprint = { ...key.fingerprint, deviceIndexes: [0, deviceIndex] };
    return {
      protocolMessage: {
        type: this.baileys.proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
        appStateSyncKeyShare: { keys: [{ keyId: { keyId: key.keyId }, keyData: { keyData: key.keyData, fingerprint, timestamp: key.timestamp } }] },
      },
    };
  }

  /** Whether the model change being applied now is the upload of this session (not news for its device). */
  isOwnUpload(sessionId: string): boolean {
    return this.applying === sessionId;
  }

  /** The answer to a `w:sync:app:state` IQ: each collection's patches since the device's version, or its upload taken. */
  answer(iq: BinaryNode, device: AppStateDevice): Promise<BinaryNode[]> {
    return this.serial(device.sessionId, async () => {
      await this.seed(device);
      const asked = children(child(iq, 'sync')).filter((c) => c.tag === 'collection');
      if (!asked.length) throw new IqError(400, 'bad-request');
      const out: BinaryNode[] = [];
      for (const node of asked) {
        const name = node.attrs.name;
        if (!isCollection(name)) throw new IqError(400, 'bad-request');
        const collection = this.collection(device.sessionId, name);
        const version = Number(node.attrs.version ?? 0);
        if (!Number.isInteger(version) || version < 0) throw new IqError(400, 'bad-request');
        const upload = bytesOf(child(node, 'patch'));
        if (upload) {
          await this.upload(device, name, collection, version, upload);
          out.push({ tag: 'collection', attrs: { name, version: String(collection.state.version) } });
          continue;
        }
        const newer = collection.patches.slice(version);
        const patches: BinaryNode[] = newer.map((content) => ({ tag: 'patch', attrs: {}, content }));
        out.push({
          tag: 'collection',
          attrs: { name, version: String(collection.state.version) },
          ...(patches.length ? { content: [{ tag: 'patches', attrs: {}, content: patches }] } : {}),
        });
      }
      return [{ tag: 'sync', attrs: {}, content: out }];
    });
  }

  /**
   * The first time a session syncs, the phone writes what the account already has: a business account's labels and
   * the labels its chats carry, the chats' archive, pin and mute marks, the push name.
   */
  prepare(device: AppStateDevice): Promise<void> {
    return this.serial(device.sessionId, () => this.seed(device));
  }

  private async seed(device: AppStateDevice): Promise<void> {
    if (this.sessions.has(device.sessionId)) return;
    this.sessions.set(device.sessionId, new Map());
    const { network, sessionId, account } = device;
    const world = network.world;
    const changes: PhoneChange[] = [];
    const business = world.accountExtras.isBusiness(account.jid);
    if (business) for (const label of world.accountExtras.labelList(account.jid)) changes.push({ label: { action: 'edited', labelId: label.id, label, chatJid: null } });
    for (const [jid, chat] of Object.entries(world.chats.account(sessionId))) {
      // only the marks it has: an unarchived, unpinned, unmuted chat is no news
      changes.push({ chat: { jid, archived: chat.archived || undefined, pinned: chat.pinned || undefined, mutedUntil: chat.mutedUntil ?? undefined } });
      if (business) for (const labelId of world.accountExtras.labelsOfChat(account.jid, jid)) changes.push({ label: { action: 'assigned', labelId, label: null, chatJid: jid } });
    }
    const name = world.contacts.register(account.phoneNumber).name;
    if (name) changes.push({ pushName: name });
    for (const create of this.patchesOf(changes)) await this.phonePatch(device, create);
  }

  /** The collections that hold patches for this session (what a device that just got the key should resync). */
  filled(sessionId: string): AppStateCollectionName[] {
    return [...(this.sessions.get(sessionId) ?? new Map<AppStateCollectionName, Collection>())].filter(([, c]) => c.patches.length).map(([name]) => name);
  }

  /**
   * What the phone (or the account's other device) changed, as the patch it writes: a chat's marks or a label.
   * Resolves with the collections that changed (the device is told with `server_sync`); [] when nothing is news.
   */
  phoneChange(device: AppStateDevice, changes: PhoneChange[]): Promise<AppStateCollectionName[]> {
    return this.serial(device.sessionId, async () => {
      await this.seed(device);
      const creates = this.patchesOf(changes);
      for (const create of creates) await this.phonePatch(device, create);
      return [...new Set(creates.map((c) => c.type as AppStateCollectionName))];
    });
  }

  /** The patches the phone writes for these changes, in their order (Baileys' chatModificationToAppPatch). */
  private patchesOf(changes: PhoneChange[]): PatchCreate[] {
    const creates: PatchCreate[] = [];
    const modify = (mod: Parameters<Baileys['chatModificationToAppPatch']>[0], jid: string) => creates.push(this.baileys.chatModificationToAppPatch(mod, jid));
    for (const change of changes) {
      if ('pushName' in change) {
        modify({ pushNameSetting: change.pushName }, '');
      } else if ('chat' in change) {
        const { jid, archived, pinned, mutedUntil, unreadCount } = change.chat;
        if (archived !== undefined) modify({ archive: archived, lastMessages: [] }, jid);
        if (pinned !== undefined) modify({ pin: pinned }, jid);
        if (mutedUntil !== undefined) modify({ mute: mutedUntil }, jid);
        if (unreadCount === 0) modify({ markRead: true, lastMessages: [] }, jid);
      } else {
        const { action, labelId, label, chatJid } = change.label;
        if (action === 'edited' && label) modify({ addLabel: { id: labelId, name: label.name, color: label.color, deleted: false } }, '');
        if (action === 'deleted') modify({ addLabel: { id: labelId, name: '', color: 0, deleted: true } }, '');
        if ((action === 'assigned' || action === 'unassigned') && chatJid) {
          modify(action === 'assigned' ? { addChatLabel: { labelId } } : { removeChatLabel: { labelId } }, chatJid);
        }
      }
    }
    return creates;
  }

  // ---- internals ---------------------------------------------------------------------------

  private serial<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(sessionId) ?? Promise.resolve()).then(work, work);
    this.queues.set(
      sessionId,
      run.catch(() => undefined),
    );
    return run;
  }

  private collection(sessionId: string, name: AppStateCollectionName): Collection {
    let collections = this.sessions.get(sessionId);
    if (!collections) this.sessions.set(sessionId, (collections = new Map()));
    let collection = collections.get(name);
    if (!collection) collections.set(name, (collection = { state: this.baileys.newLTHashState(), patches: [] }));
    return collection;
  }

  /** The key a patch names, as Baileys' decoder asks for it (base64 key id). */
  private keyById(phoneNumber: string): (keyId: string) => Promise<{ keyData: Buffer; fingerprint: AppStateKey['fingerprint']; timestamp: number } | undefined> {
    return async (keyId) => {
      const key = this.keys.get(phoneNumber);
      return key && key.keyId.toString('base64') === keyId ? { keyData: key.keyData, fingerprint: key.fingerprint, timestamp: key.timestamp } : undefined;
    };
  }

  /** A patch the phone writes with the account's key, on top of the session's collection. */
  private async phonePatch(device: AppStateDevice, create: PatchCreate): Promise<void> {
    const collection = this.collection(device.sessionId, create.type as AppStateCollectionName);
    const key = this.keyOf(device.account.phoneNumber);
    const { patch, state } = await this.baileys.encodeSyncdPatch(create, key.keyId.toString('base64'), collection.state, this.keyById(device.account.phoneNumber) as never);
    collection.patches.push(this.baileys.proto.SyncdPatch.encode({ ...patch, version: { version: state.version } }).finish());
    collection.state = state;
  }

  /**
   * A device's patch: it must build on the server's version; it is decoded and verified (patch MAC, value and index
   * MACs, the LTHash snapshot MAC), its mutations applied to the model, then it becomes the collection's next version.
   */
  private async upload(device: AppStateDevice, name: AppStateCollectionName, collection: Collection, version: number, bytes: Uint8Array): Promise<void> {
    if (version !== collection.state.version) throw new IqError(409, 'conflict');
    const { proto } = this.baileys;
    const patch = proto.SyncdPatch.decode(bytes);
    patch.version = proto.SyncdVersion.create({ version: version + 1 });
    const stored = proto.SyncdPatch.encode(patch).finish();
    const sent = patch.mutations?.length ?? 0;
    // decodePatches skips what does not verify and says so through its logger: any such word refuses the patch
    const refusals: string[] = [];
    const quiet = () => undefined;
    const logger = { level: 'warn', child: () => logger, trace: quiet, debug: quiet, info: quiet, error: quiet, warn: (_o: unknown, msg?: string) => void refusals.push(msg ?? 'refused') };
    let decoded: { state: LTHashState; mutationMap: Record<string, ChatMutation> };
    try {
      decoded = (await this.baileys.decodePatches(name, [patch], collection.state, this.keyById(device.account.phoneNumber) as never, {}, undefined, logger as never, true)) as typeof decoded;
    } catch {
      throw new IqError(400, 'bad-request');
    }
    const mutations = Object.values(decoded.mutationMap);
    if (refusals.length || sent === 0 || mutations.length === 0) throw new IqError(400, 'bad-request');
    this.applying = device.sessionId;
    try {
      for (const mutation of mutations) this.apply(device, mutation);
    } finally {
      this.applying = null;
    }
    collection.state = decoded.state;
    collection.patches.push(stored);
  }

  /** One mutation of a device's patch, as the device's own action on the model (what the `sim` door does). */
  private apply(device: AppStateDevice, mutation: ChatMutation): void {
    const value = mutation.syncAction.value ?? {};
    const [type, id] = mutation.index;
    if (value.archiveChatAction) return void act(device, 'chat.archive', { chatJid: id, archived: Boolean(value.archiveChatAction.archived), last: null });
    if (value.pinAction) return void act(device, 'chat.pin', { chatJid: id, pinned: Boolean(value.pinAction.pinned) });
    if (value.muteAction) {
      const end = this.baileys.toNumber(value.muteAction.muteEndTimestamp as never);
      return void act(device, 'chat.mute', { chatJid: id, until: value.muteAction.muted ? (end > 0 ? end : MUTED_FOR_EVER) : null });
    }
    if (value.labelAssociationAction && type === 'label_jid') {
      const labelId = mutation.index[1];
      const chatJid = mutation.index[2];
      return void act(device, value.labelAssociationAction.labeled ? 'labels.addToChat' : 'labels.removeFromChat', { chatJid, labelId });
    }
    if (value.pushNameSetting) return void act(device, 'profile.update', { name: value.pushNameSetting.name ?? '' });
    // read marks travel as receipts; the rest (stars, settings, contacts) the model does not keep: stored, not applied
  }
}
