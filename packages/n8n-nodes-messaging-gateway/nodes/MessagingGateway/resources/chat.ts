import type { INodeProperties } from 'n8n-workflow';
import { operationsOf, optional, paging, required, seg, SESSION_PATH, sessionField, show } from './describe';

const R = 'chat';
const CHAT_PATH = `${SESSION_PATH}/chats/${seg('chatJid')}`;

export const chatProperties: INodeProperties[] = [
  operationsOf(R, [
    { value: 'list', name: 'Get Many', action: 'Get many chats', method: 'GET', url: `=${SESSION_PATH}/chats`, list: true, description: 'Most recent first' },
    { value: 'messages', name: 'Get Messages', action: 'Get the messages of a chat', method: 'GET', url: `=${CHAT_PATH}/messages`, list: true },
    { value: 'read', name: 'Mark Read', action: 'Mark a chat read', method: 'POST', url: `=${CHAT_PATH}:read` },
    { value: 'archive', name: 'Archive', action: 'Archive a chat', method: 'POST', url: `=${CHAT_PATH}:archive` },
    { value: 'unarchive', name: 'Unarchive', action: 'Unarchive a chat', method: 'POST', url: `=${CHAT_PATH}:unarchive` },
    { value: 'pin', name: 'Pin', action: 'Pin a chat', method: 'POST', url: `=${CHAT_PATH}:pin` },
    { value: 'unpin', name: 'Unpin', action: 'Unpin a chat', method: 'POST', url: `=${CHAT_PATH}:unpin` },
    { value: 'mute', name: 'Mute', action: 'Mute a chat', method: 'POST', url: `=${CHAT_PATH}:mute` },
    { value: 'unmute', name: 'Unmute', action: 'Unmute a chat', method: 'POST', url: `=${CHAT_PATH}:unmute` },
    { value: 'presence', name: 'Show Presence', action: 'Show typing or recording in a chat', method: 'POST', url: `=${CHAT_PATH}/presence`, noContent: true },
  ]),
  sessionField(R),
  required(R, ['messages', 'read', 'archive', 'unarchive', 'pin', 'unpin', 'mute', 'unmute', 'presence'], 'chatJid', 'Chat JID', null, {
    placeholder: '15551234567@s.whatsapp.net',
    description: 'A JID, a group JID or a phone number',
  }),
  optional('messageId', { displayName: 'Up To Message ID', name: 'readUpTo', type: 'string', default: '', description: 'Default: the newest message', displayOptions: show(R, ['read']) }),
  {
    displayName: 'Until',
    name: 'muteUntil',
    type: 'dateTime',
    required: true,
    default: '',
    displayOptions: show(R, ['mute']),
    routing: { send: { type: 'body', property: 'until', value: '={{ new Date($value).getTime() }}' } },
  },
  {
    displayName: 'Presence',
    name: 'chatPresence',
    type: 'options',
    default: 'composing',
    options: [
      { name: 'Typing', value: 'composing' },
      { name: 'Recording', value: 'recording' },
      { name: 'Paused', value: 'paused' },
    ],
    displayOptions: show(R, ['presence']),
    routing: { send: { type: 'body', property: 'presence' } },
  },
  ...paging(R, ['list', 'messages']),
];
