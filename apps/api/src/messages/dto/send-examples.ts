import type { OutboundMessageType } from '@app/contracts';

/**
 * One request body per send type, as Swagger UI offers them in its example menu of `POST /sessions/{id}/messages`
 * (issue 38). Typed by every OutboundMessageType, so a new type does not compile without its example; each one passes
 * the body's validation (send-examples.spec.ts).
 */
export const SEND_EXAMPLES: Record<OutboundMessageType, { summary: string; value: Record<string, unknown> }> = {
  text: { summary: 'text', value: { to: '15551234567', text: 'Hello from the gateway' } },
  image: {
    summary: 'image by URL, with a caption',
    value: { to: '15551234567', type: 'image', text: 'Our new shop', media: { url: 'https://example.com/shop.jpg', mimetype: 'image/jpeg' } },
  },
  video: { summary: 'video by URL', value: { to: '15551234567', type: 'video', media: { url: 'https://example.com/tour.mp4', mimetype: 'video/mp4' } } },
  audio: { summary: 'audio file by URL', value: { to: '15551234567', type: 'audio', media: { url: 'https://example.com/jingle.mp3', mimetype: 'audio/mpeg' } } },
  voice: {
    summary: 'voice note (Ogg Opus) by URL',
    value: { to: '15551234567', type: 'voice', media: { url: 'https://example.com/note.ogg', mimetype: 'audio/ogg; codecs=opus' } },
  },
  document: {
    summary: 'document as base64, with its file name',
    value: { to: '15551234567', type: 'document', media: { base64: 'JVBERi0xLjQKJcOkw7zDtsOfCg==', mimetype: 'application/pdf', filename: 'invoice.pdf' } },
  },
  sticker: { summary: 'sticker (image/webp) by URL', value: { to: '15551234567', type: 'sticker', media: { url: 'https://example.com/thumbs-up.webp', mimetype: 'image/webp' } } },
  location: { summary: 'location', value: { to: '15551234567', type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Berlin office', address: 'Unter den Linden 1' } } },
  contact: { summary: 'contact card', value: { to: '15551234567', type: 'contact', contact: { fullName: 'Ada Lovelace', phoneNumber: '+44 20 7946 0000' } } },
  reaction: { summary: 'reaction to a message of the session ("" removes it)', value: { to: '15551234567', type: 'reaction', reaction: { messageId: 'msg_01JD8Y4ZK3V9W6T2M0QX7R5B1C', emoji: '👍' } } },
  poll: { summary: 'poll', value: { to: '120363000000000001@g.us', type: 'poll', poll: { name: 'Lunch?', options: ['pizza', 'sushi', 'salad'], selectableCount: 1 } } },
  pollVote: { summary: 'vote on a poll of the session', value: { to: '15551234567', type: 'pollVote', pollVote: { pollMessageId: 'msg_01JD8Y4ZK3V9W6T2M0QX7R5B1C', options: ['sushi'] } } },
};
