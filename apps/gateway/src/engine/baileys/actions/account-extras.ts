import type { BinaryNode } from '@whiskeysockets/baileys';
import {
  type AccountExtrasActionMap,
  CHANNEL_MESSAGES_MAX,
  channelInviteCode,
  type ChannelView,
  DomainError,
  type SessionActionHandlers,
} from '@app/contracts';
import { channelMessagesFrom, labelBookOf } from '../account-extras-watch';
import type { BaileysActionContext } from './context';

/**
 * Labels and channels (CONTRACT 13) through Baileys' own socket functions: `addChatLabel` / `removeChatLabel`
 * (app-state patches), `newsletterMetadata`, `newsletterFollow`, `newsletterUnfollow`, `newsletterFetchMessages`.
 * The labels list is what app-state sync told this socket (account-extras-watch.ts: Baileys has no query for it).
 * The followed channels are what the gateway keeps (`ctx.channels`: followed through the API, or seen posting):
 * Baileys 7.0.0-rc14 has no query for them either.
 */

/** Channels known only by their posts are named by the network at most this many per list (each is one query). */
export const CHANNELS_NAMED_PER_LIST = 10;

/** WhatsApp Business's platforms, as the pairing told them (Baileys' isWABusinessPlatform). */
const BUSINESS_PLATFORMS = new Set(['smba', 'smbi']);

function requireBusiness(ctx: BaileysActionContext): void {
  const platform = ctx.sock.authState?.creds?.platform;
  if (!platform || !BUSINESS_PLATFORMS.has(platform)) {
    throw new DomainError('conflict', 'labels are a WhatsApp Business feature: this account is not a business account', { platform: platform ?? null });
  }
}

function knownLabel(ctx: BaileysActionContext, labelId: string): void {
  const book = labelBookOf(ctx.sock);
  // before app state has synced, the socket knows no labels: WhatsApp decides
  if (book.synced && !book.get(labelId)) throw new DomainError('not_found', 'the account has no label with this id', { labelId });
}

type ChannelMeta = {
  id: string;
  name?: string;
  description?: string;
  invite?: string;
  subscribers?: number;
  thread_metadata?: { name?: unknown; description?: unknown; invite?: unknown; subscribers_count?: unknown };
};

function channelView(meta: ChannelMeta): ChannelView {
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { text?: unknown }).text === 'string' ? (v as { text: string }).text : null);
  const count = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);
  return {
    jid: meta.id,
    name: text(meta.name) ?? text(meta.thread_metadata?.name) ?? '',
    description: text(meta.description) ?? text(meta.thread_metadata?.description),
    invite: meta.invite ?? text(meta.thread_metadata?.invite),
    subscribers: count(meta.subscribers) ?? count(meta.thread_metadata?.subscribers_count),
  };
}

/** What the gateway keeps of a channel the network described: its facts, without a name it did not give. */
const keptFacts = ({ name, ...rest }: ChannelView) => (name ? { name, ...rest } : rest);

/**
 * The followed channels the gateway keeps; the ones known only by their posts are named by the network first (a few
 * per list; one that does not answer stays listed, unnamed, and is asked again next time).
 */
async function followedChannels(ctx: BaileysActionContext): Promise<ChannelView[]> {
  const book = ctx.channels;
  if (!book) throw new DomainError('not_implemented', 'listing followed channels needs the gateway\'s store of them, which this connection has not', {});
  let toName = CHANNELS_NAMED_PER_LIST;
  const data: ChannelView[] = [];
  for (const { named, ...kept } of await book.list()) {
    if (named || toName-- <= 0) {
      data.push(kept);
      continue;
    }
    const meta = (await ctx.sock.newsletterMetadata('jid', kept.jid).catch((err: unknown) => {
      ctx.logger.warn({ err: String(err), channelJid: kept.jid }, 'naming a followed channel failed; listed unnamed');
      return null;
    })) as ChannelMeta | null;
    if (!meta?.id) {
      data.push(kept);
      continue;
    }
    const view = { ...channelView(meta), jid: kept.jid };
    await book.remember(keptFacts(view));
    data.push({ ...kept, ...keptFacts(view) });
  }
  return data;
}

export const ACCOUNT_EXTRAS_BAILEYS_ACTIONS: Pick<SessionActionHandlers<BaileysActionContext>, keyof AccountExtrasActionMap> = {
  'labels.list': (ctx) => {
    requireBusiness(ctx);
    return { data: labelBookOf(ctx.sock).list() };
  },
  'labels.addToChat': async (ctx, { chatJid, labelId }) => {
    requireBusiness(ctx);
    knownLabel(ctx, labelId);
    await ctx.sock.addChatLabel(chatJid, labelId);
    const book = labelBookOf(ctx.sock);
    book.mark(chatJid, labelId, true);
    return { chatJid, labels: book.labelsOf(chatJid) };
  },
  'labels.removeFromChat': async (ctx, { chatJid, labelId }) => {
    requireBusiness(ctx);
    knownLabel(ctx, labelId);
    await ctx.sock.removeChatLabel(chatJid, labelId);
    const book = labelBookOf(ctx.sock);
    book.mark(chatJid, labelId, false);
    return { chatJid, labels: book.labelsOf(chatJid) };
  },
  // WhatsApp Web asks for the followed channels with a query Baileys 7.0.0-rc14 does not offer: the gateway's list
  'channels.list': async (ctx) => ({ data: await followedChannels(ctx) }),
  'channels.follow': async (ctx, { invite }) => {
    const code = channelInviteCode(invite);
    if (!code) throw new DomainError('validation_error', 'invite must be a channel invite code or link', { invite: 'must be a channel invite code or link' });
    const meta = await ctx.sock.newsletterMetadata('invite', code);
    if (!meta?.id) throw new DomainError('not_found', 'no channel has this invite', { invite });
    await ctx.sock.newsletterFollow(meta.id);
    const view = channelView({ ...meta, invite: meta.invite ?? code });
    await ctx.channels?.remember(keptFacts(view));
    return view;
  },
  'channels.unfollow': async (ctx, { jid }) => {
    await ctx.sock.newsletterUnfollow(jid);
    await ctx.channels?.forget(jid);
    return {};
  },
  'channels.messages': async (ctx, { jid, count }) => {
    const n = Math.min(Math.max(1, count), CHANNEL_MESSAGES_MAX);
    const result = (await ctx.sock.newsletterFetchMessages(jid, n, undefined as unknown as number, undefined as unknown as number)) as BinaryNode;
    return { data: channelMessagesFrom(result, jid, (bytes) => ctx.runtime.decodeMessage(bytes)).slice(0, n) };
  },
};
