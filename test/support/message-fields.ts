/** Every field of a Message (CONTRACT 10, plus `sendAt` and `campaignId` of CONTRACT 17), sorted: what an answer or an event carries. */
export const MESSAGE_FIELDS = [
  'id', 'sessionId', 'organizationId', 'waMessageId', 'direction', 'chatJid', 'from', 'type', 'text', 'media', 'location', 'contact',
  'poll', 'quotedMessageId', 'status', 'error', 'createdAt', 'updatedAt', 'sentAt', 'fromHistory', 'editedAt', 'revokedAt', 'reactions', 'pollVotes',
  'sendAt', 'campaignId',
].sort();
