import type { MessageKeyRef } from '@app/contracts';
import type { MessageRow } from '@app/database';

/** How the network addresses a stored message: the gateway's keyOf, for what the API hands it (votes, forwards, edits). */
export function messageKeyOf(row: MessageRow): MessageKeyRef {
  const fromMe = row.direction === 'out';
  return { waMessageId: row.waMessageId, chatJid: row.chatJid, fromMe, participant: !fromMe && row.chatJid.endsWith('@g.us') ? row.from : null };
}

/** Why a vote cannot be cast on `polled` (422 details by field), or null: a poll of the chat, with its option names. */
export function pollVoteProblem(polled: MessageRow, to: string, options: string[]): Record<string, string[]> | null {
  if (polled.type !== 'poll' || !polled.poll) return { 'pollVote.pollMessageId': ['is not a poll'] };
  if (polled.chatJid !== to) return { 'pollVote.pollMessageId': [`the poll is in chat ${polled.chatJid}, not in ${to}`] };
  const unknown = options.filter((o) => !polled.poll!.options.includes(o));
  if (unknown.length) return { 'pollVote.options': [`not options of this poll: ${unknown.join(', ')}`] };
  if (options.length > polled.poll.selectableCount) return { 'pollVote.options': [`at most ${polled.poll.selectableCount} may be picked`] };
  return null;
}
