/**
 * What the gateway's API names, as this package offers it in n8n's menus. The repository's test
 * (test/n8n.e2e-spec.ts) checks both lists against libs/contracts, so an event or a message type added there and not
 * here fails it.
 */
export const EVENT_TYPES = [
  'session.status',
  'session.connected',
  'session.disconnected',
  'session.logged_out',
  'auth.qr',
  'message.received',
  'message.sent',
  'message.failed',
  'message.ack',
  'message.reaction',
  'message.edited',
  'message.revoked',
  'poll.vote',
  'group.created',
  'group.update',
  'group.participants',
  'presence.update',
  'call.incoming',
  'webhook.test',
  'webhook.disabled',
  'contact.blocked',
  'contact.unblocked',
  'chat.update',
  'history.synced',
  'label.update',
  'status.received',
  'channel.message',
  'campaign.progress',
  'campaign.completed',
] as const;

export const MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'location', 'contact', 'reaction', 'poll', 'voice', 'sticker', 'pollVote'] as const;

export const MEDIA_MESSAGE_TYPES = ['image', 'video', 'audio', 'document', 'voice', 'sticker'];
export const CAPTIONED_MESSAGE_TYPES = ['image', 'video', 'document'];

/** `message.received` → "Message Received" */
export const titleOf = (name: string): string =>
  name
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
