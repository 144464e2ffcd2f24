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
 */

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

function channelView(meta: { id: string; name?: string; description?: string; invite?: string; subscribers?: number; thread_metadata?: { name?: unknown; description?: unknown } }): ChannelView {
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { text?: unknown }).text === 'string' ? (v as { text: string }).text : null);
  return {
    jid: meta.id,
    name: text(meta.name) ?? text(meta.thread_metadata?.name) ?? '',
    description: text(meta.description) ?? text(meta.thread_metadata?.description),
    invite: meta.invite ?? null,
    subscribers: typeof meta.subscribers === 'number' ? meta.subscribers : meta.subscribers ? Number(meta.subscribers) : null,
  };
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
  'channels.list': () => {
    // WhatsApp Web asks for the followed channels with a query Baileys 7.0.0-rc14 does not offer (docs/labels-status-channels.md)
    throw new DomainError('not_implemented', 'listing followed channels is not available on the baileys engine (Baileys 7.0.0-rc14 has no query for it)', {});
  },
  'channels.follow': async (ctx, { invite }) => {
    const code = channelInviteCode(invite);
    if (!code) throw new DomainError('validation_error', 'invite must be a channel invite code or link', { invite: 'must be a channel invite code or link' });
    const meta = await ctx.sock.newsletterMetadata('invite', code);
    if (!meta?.id) throw new DomainError('not_found', 'no channel has this invite', { invite });
    await ctx.sock.newsletterFollow(meta.id);
    return channelView({ ...meta, invite: meta.invite ?? code });
  },
  'channels.unfollow': async (ctx, { jid }) => {
    await ctx.sock.newsletterUnfollow(jid);
    return {};
  },
  'channels.messages': async (ctx, { jid, count }) => {
    const n = Math.min(Math.max(1, count), CHANNEL_MESSAGES_MAX);
    const result = (await ctx.sock.newsletterFetchMessages(jid, n, undefined as unknown as number, undefined as unknown as number)) as BinaryNode;
    return { data: channelMessagesFrom(result, jid, (bytes) => ctx.runtime.decodeMessage(bytes)).slice(0, n) };
  },
};
