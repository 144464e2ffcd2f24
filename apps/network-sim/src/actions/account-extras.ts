import {
  CHANNEL_JID_PATTERN,
  CHANNEL_MESSAGES_MAX,
  channelInviteCode,
  CHAT_JID_PATTERN,
  ChannelMessageView,
  ChannelView,
  ChatLabelsView,
  DomainError,
  LabelUpdatePayload,
  LabelView,
  type SessionActionHandlers,
  SimInboundStatus,
  SimMedia,
  SimNetworkEvent,
  SimSentMessage,
  USER_JID_PATTERN,
} from '@app/contracts';
import { randomBytes, randomInt } from 'node:crypto';
import type { AccountExtrasActionMap } from '@app/contracts';
import { BACKGROUND_COLOR_PATTERN } from '../sim-input';
import type { SimActionScope } from './scope';

/**
 * What the simulated network knows of CONTRACT 13 beyond groups: WhatsApp Business labels per business account (and
 * which chats carry them), statuses (stories) with their audience, and channels (newsletters) with their posts and
 * followers. Labels and channels belong to the account (every linked device of it sees the same), so they are keyed
 * by the account's jid. In memory, like the rest of the simulator.
 *
 * Reached as `SimWorld.accountExtras` by the action handlers below (a device asks), by the control API
 * (network-sim.ts: the phone, contacts and channel admins act) and by the send path (a device posts a status).
 */

/** What the network needs of SimNetwork to tell devices (kept narrow so this file does not reach into devices). */
export interface AccountExtrasNetwork {
  /** the session ids of the paired devices of an account */
  sessionsOfAccount(jid: string): string[];
  /** queues an event for one paired device (pushed now when connected) */
  deliverTo(sessionId: string, event: SimNetworkEvent): unknown;
  /** the account of a paired device */
  accountOf(sessionId: string): { jid: string };
  /** keeps media bytes on the network (served at GET /sim/media/{id}) */
  keepMediaBytes(input: { data: Buffer; mimetype: string; filename: string | null; caption: string | null }): SimMedia;
}

/** WhatsApp Business starts every account with these labels (ids 1..5), as the app does. */
const PREDEFINED_LABELS: LabelView[] = [
  { id: '1', name: 'New customer', color: 0 },
  { id: '2', name: 'New order', color: 1 },
  { id: '3', name: 'Pending payment', color: 2 },
  { id: '4', name: 'Paid', color: 3 },
  { id: '5', name: 'Order complete', color: 4 },
];
const LABEL_COLORS = 20;
const MAX_LABEL_NAME = 100;
const MAX_STATUS_TEXT = 700;

interface SimChannel {
  jid: string;
  name: string;
  description: string | null;
  invite: string;
  posts: ChannelMessageView[];
  /** account jids */
  followers: Set<string>;
  serverSeq: number;
}

/** A status as the network keeps it: who posted it, to whom, and which devices it reached. */
export interface SimStatus extends SimInboundStatus {
  /** the device that posted it, or null for a contact's status posted through the control API */
  sessionId: string | null;
  audience: string[];
  /** the sessions the status reached (paired devices of the audience) */
  deliveredTo: string[];
}

/** One device's view of an account's labels (`GET /sim/sessions/{id}/labels`). */
export interface SimLabelsView {
  jid: string;
  isBusiness: boolean;
  labels: LabelView[];
  /** chat jid → the ids of the labels it carries */
  chats: Record<string, string[]>;
}

type Body = Record<string, unknown>;

function invalid(field: string, message: string): DomainError {
  return new DomainError('validation_error', `${field} ${message}`, { [field]: message });
}

function text(field: string, value: unknown, max: number, optional = false): string | null {
  if (optional && (value === undefined || value === null)) return null;
  if (typeof value !== 'string' || value.trim() === '') throw invalid(field, 'must be a non-empty string');
  if (value.length > max) throw invalid(field, `must be at most ${max} characters`);
  return value;
}

function jidOf(field: string, value: unknown, pattern: RegExp, what: string): string {
  if (typeof value !== 'string' || !pattern.test(value)) throw invalid(field, `must be ${what}`);
  return value;
}

function color(field: string, value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) >= LABEL_COLORS) throw invalid(field, `must be an integer 0..${LABEL_COLORS - 1}`);
  return value as number;
}

export class SimAccountExtras {
  private readonly business = new Set<string>();
  /** account jid → label id → label */
  private readonly labels = new Map<string, Map<string, LabelView>>();
  /** account jid → chat jid → label ids */
  private readonly chatLabels = new Map<string, Map<string, Set<string>>>();
  private readonly channels = new Map<string, SimChannel>();
  private readonly channelByInvite = new Map<string, string>();
  private readonly statuses: SimStatus[] = [];

  // ---- business accounts and labels ----------------------------------------------------------

  /** Whether an account is a WhatsApp Business account (the phone's app decides; `scan {isBusiness}` tells). */
  setBusiness(jid: string, isBusiness: boolean): void {
    if (isBusiness) this.business.add(jid);
    else this.business.delete(jid);
  }

  isBusiness(jid: string): boolean {
    return this.business.has(jid);
  }

  /** The ids of the labels a chat of an account carries (the `labels` of the chat state; [] for none). */
  labelsOfChat(accountJid: string, chatJid: string): string[] {
    return [...(this.chatLabels.get(accountJid)?.get(chatJid) ?? [])].sort();
  }

  view(accountJid: string): SimLabelsView {
    const chats: Record<string, string[]> = {};
    for (const [chatJid, ids] of this.chatLabels.get(accountJid) ?? []) if (ids.size) chats[chatJid] = [...ids].sort();
    return { jid: accountJid, isBusiness: this.isBusiness(accountJid), labels: this.isBusiness(accountJid) ? this.labelList(accountJid) : [], chats };
  }

  labelList(accountJid: string): LabelView[] {
    return [...this.book(accountJid).values()].sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
  }

  /**
   * The phone edits its labels (`POST /sim/sessions/{id}/labels {id?, name?, color?, deleted?}`): a new label (no id),
   * a change, or a deletion (which also takes it off every chat). Every linked device of the account is told.
   */
  editLabel(network: AccountExtrasNetwork, sessionId: string, body: Body): LabelView & { deleted: boolean; delivered: string[] } {
    const account = network.accountOf(sessionId).jid;
    this.requireBusiness(account);
    const book = this.book(account);
    const deleted = body.deleted === undefined ? false : body.deleted;
    if (typeof deleted !== 'boolean') throw invalid('deleted', 'must be a boolean');
    const id = body.id === undefined ? null : text('id', body.id, 32);
    const known = id ? book.get(id) : undefined;
    if (id && !known) throw new DomainError('not_found', 'the account has no label with this id', { id });
    if (deleted) {
      book.delete(known!.id);
      for (const ids of this.chatLabels.get(account)?.values() ?? []) ids.delete(known!.id);
      const delivered = this.tellAccount(network, account, { action: 'deleted', labelId: known!.id, label: null, chatJid: null });
      return { ...known!, deleted: true, delivered };
    }
    const label: LabelView = {
      id: known?.id ?? String(Math.max(0, ...[...book.keys()].map(Number).filter(Number.isFinite)) + 1),
      name: body.name === undefined && known ? known.name : text('name', body.name, MAX_LABEL_NAME)!,
      color: body.color === undefined ? (known?.color ?? book.size % LABEL_COLORS) : color('color', body.color),
    };
    book.set(label.id, label);
    const delivered = this.tellAccount(network, account, { action: 'edited', labelId: label.id, label, chatJid: null });
    return { ...label, deleted: false, delivered };
  }

  /** A device adds a label to a chat, or removes it (no event when nothing changed). */
  assign(network: AccountExtrasNetwork, accountJid: string, args: Body, assigned: boolean): ChatLabelsView {
    this.requireBusiness(accountJid);
    const chatJid = jidOf('chatJid', args.chatJid, CHAT_JID_PATTERN, 'a chat jid');
    const labelId = text('labelId', args.labelId, 32)!;
    const label = this.book(accountJid).get(labelId);
    if (!label) throw new DomainError('not_found', 'the account has no label with this id', { labelId });
    let chats = this.chatLabels.get(accountJid);
    if (!chats) this.chatLabels.set(accountJid, (chats = new Map()));
    const ids = chats.get(chatJid) ?? new Set<string>();
    chats.set(chatJid, ids);
    const changed = assigned ? !ids.has(labelId) : ids.has(labelId);
    if (assigned) ids.add(labelId);
    else ids.delete(labelId);
    if (changed) this.tellAccount(network, accountJid, { action: assigned ? 'assigned' : 'unassigned', labelId, label, chatJid });
    return { chatJid, labels: [...ids].sort().map((id) => this.book(accountJid).get(id)!).filter(Boolean) };
  }

  private requireBusiness(jid: string): void {
    if (!this.isBusiness(jid)) throw new DomainError('conflict', 'labels are a WhatsApp Business feature: this account is not a business account', { jid });
  }

  private book(accountJid: string): Map<string, LabelView> {
    let book = this.labels.get(accountJid);
    if (!book) {
      book = new Map(PREDEFINED_LABELS.map((l) => [l.id, { ...l }]));
      this.labels.set(accountJid, book);
    }
    return book;
  }

  private tellAccount(network: AccountExtrasNetwork, accountJid: string, change: LabelUpdatePayload): string[] {
    const sessions = network.sessionsOfAccount(accountJid);
    for (const sessionId of sessions) network.deliverTo(sessionId, { type: 'label', change });
    return sessions;
  }

  // ---- statuses ------------------------------------------------------------------------------

  /** A device posted a status (a send to status@broadcast): kept with its audience and shown to the audience's devices. */
  statusPosted(network: AccountExtrasNetwork, message: SimSentMessage): SimStatus {
    const options = message.status ?? { audience: [], backgroundColor: null };
    const type = message.type === 'image' || message.type === 'video' ? message.type : 'text';
    return this.publishStatus(network, {
      id: message.id,
      from: message.from,
      type,
      text: message.text,
      media: message.media,
      backgroundColor: options.backgroundColor,
      timestamp: message.timestamp,
      sessionId: message.sessionId,
      audience: options.audience,
      deliveredTo: [],
    });
  }

  /** A contact posts a status the session's account may see (`POST /sim/sessions/{id}/status {from, text?, type?, …}`). */
  contactStatus(network: AccountExtrasNetwork, sessionId: string, body: Body): SimStatus {
    const account = network.accountOf(sessionId).jid;
    const from = jidOf('from', body.from, USER_JID_PATTERN, 'a jid <digits>@s.whatsapp.net');
    const type = body.type === undefined ? 'text' : body.type;
    if (type !== 'text' && type !== 'image') throw invalid('type', 'must be text or image');
    const caption = text('text', body.text, MAX_STATUS_TEXT, type === 'image');
    const bg = body.backgroundColor ?? null;
    if (bg !== null && (typeof bg !== 'string' || !BACKGROUND_COLOR_PATTERN.test(bg))) throw invalid('backgroundColor', 'must be #rrggbb');
    const media = type === 'image' ? network.keepMediaBytes({ data: randomBytes(256), mimetype: 'image/jpeg', filename: null, caption }) : null;
    return this.publishStatus(network, {
      id: `3EB0${randomBytes(8).toString('hex').toUpperCase()}`,
      from,
      type,
      text: caption,
      media,
      backgroundColor: bg as string | null,
      timestamp: Date.now(),
      sessionId: null,
      audience: [account],
      deliveredTo: [],
    });
  }

  listStatuses(sessionId?: string): SimStatus[] {
    return this.statuses.filter((s) => !sessionId || s.sessionId === sessionId).map((s) => ({ ...s, audience: [...s.audience], deliveredTo: [...s.deliveredTo] }));
  }

  private publishStatus(network: AccountExtrasNetwork, status: SimStatus): SimStatus {
    const { sessionId: _poster, audience: _audience, deliveredTo: _delivered, ...inbound } = status;
    for (const jid of status.audience) {
      for (const sessionId of network.sessionsOfAccount(jid)) {
        if (sessionId === status.sessionId) continue;
        network.deliverTo(sessionId, { type: 'status', status: inbound });
        status.deliveredTo.push(sessionId);
      }
    }
    this.statuses.push(status);
    return status;
  }

  // ---- channels ------------------------------------------------------------------------------

  /** A channel is created on the network (`POST /sim/channels {name, description?}`). */
  createChannel(body: Body): ChannelView {
    const name = text('name', body.name, 100)!;
    const description = text('description', body.description, 2048, true);
    let jid: string;
    do jid = `1203630${String(randomInt(1e9, 1e10))}@newsletter`;
    while (this.channels.has(jid));
    const invite = randomBytes(16).toString('base64url').slice(0, 22);
    this.channels.set(jid, { jid, name, description, invite, posts: [], followers: new Set(), serverSeq: 100 });
    this.channelByInvite.set(invite, jid);
    return this.channelView(this.channels.get(jid)!);
  }

  /** Every channel with its followers (account jids) and its number of posts (`GET /sim/channels`). */
  listChannels(): Array<ChannelView & { followers: string[]; posts: number }> {
    return [...this.channels.values()].map((c) => ({ ...this.channelView(c), followers: [...c.followers], posts: c.posts.length }));
  }

  /** The channel's admin posts (`POST /sim/channels/{jid}/posts {text}`): every follower's devices get it. */
  post(network: AccountExtrasNetwork, channelJid: string, body: Body): ChannelMessageView & { delivered: string[] } {
    const channel = this.channel(channelJid);
    const post: ChannelMessageView = { channelJid, serverId: String(++channel.serverSeq), text: text('text', body.text, 4096), type: 'text', timestamp: Date.now() };
    channel.posts.push(post);
    const delivered: string[] = [];
    for (const jid of channel.followers) {
      for (const sessionId of network.sessionsOfAccount(jid)) {
        network.deliverTo(sessionId, { type: 'channel-message', post });
        delivered.push(sessionId);
      }
    }
    return { ...post, delivered };
  }

  followed(accountJid: string): ChannelView[] {
    return [...this.channels.values()].filter((c) => c.followers.has(accountJid)).map((c) => this.channelView(c));
  }

  follow(accountJid: string, args: Body): ChannelView {
    const code = typeof args.invite === 'string' ? channelInviteCode(args.invite) : null;
    if (!code) throw invalid('invite', 'must be a channel invite code or link');
    const jid = this.channelByInvite.get(code);
    if (!jid) throw new DomainError('not_found', 'no channel has this invite', { invite: args.invite });
    const channel = this.channel(jid);
    channel.followers.add(accountJid);
    return this.channelView(channel);
  }

  unfollow(accountJid: string, args: Body): Record<string, never> {
    const channel = this.channel(jidOf('jid', args.jid, CHANNEL_JID_PATTERN, 'a channel jid <digits>@newsletter'));
    if (!channel.followers.delete(accountJid)) throw new DomainError('not_found', 'the account does not follow this channel', { jid: channel.jid });
    return {};
  }

  messages(args: Body): { data: ChannelMessageView[] } {
    const channel = this.channel(jidOf('jid', args.jid, CHANNEL_JID_PATTERN, 'a channel jid <digits>@newsletter'));
    const count = args.count ?? 50;
    if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > CHANNEL_MESSAGES_MAX) throw invalid('count', `must be 1..${CHANNEL_MESSAGES_MAX}`);
    return { data: channel.posts.slice(-(count as number)).reverse() };
  }

  private channel(jid: string): SimChannel {
    const channel = this.channels.get(jid);
    if (!channel) throw new DomainError('not_found', 'no channel with this jid exists on the network', { jid });
    return channel;
  }

  private channelView(c: SimChannel): ChannelView {
    return { jid: c.jid, name: c.name, description: c.description, invite: c.invite, subscribers: c.followers.size };
  }
}

/** The handlers' scope: the device, and the area's state in SimWorld. */
type AccountExtrasScope = SimActionScope<{ readonly accountExtras: SimAccountExtras }>;

/** How the simulator plays the labels and channels actions a device asks for (SIM_ACTIONS). */
export const ACCOUNT_EXTRAS_SIM_ACTIONS: Pick<SessionActionHandlers<AccountExtrasScope>, keyof AccountExtrasActionMap> = {
  'labels.list': ({ world, account }) => {
    const extras = world.accountExtras;
    if (!extras.isBusiness(account.jid)) throw new DomainError('conflict', 'labels are a WhatsApp Business feature: this account is not a business account', {});
    return { data: extras.labelList(account.jid) };
  },
  'labels.addToChat': ({ world, network, account }, args) => world.accountExtras.assign(network, account.jid, args as unknown as Body, true),
  'labels.removeFromChat': ({ world, network, account }, args) => world.accountExtras.assign(network, account.jid, args as unknown as Body, false),
  'channels.list': ({ world, account }) => ({ data: world.accountExtras.followed(account.jid) }),
  'channels.follow': ({ world, account }, args) => world.accountExtras.follow(account.jid, args as unknown as Body),
  'channels.unfollow': ({ world, account }, args) => world.accountExtras.unfollow(account.jid, args as unknown as Body),
  'channels.messages': ({ world }, args) => world.accountExtras.messages(args as unknown as Body),
};
