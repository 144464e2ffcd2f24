import type { INodeProperties } from 'n8n-workflow';
import { LIST_VALUE, operationsOf, paging, required, seg, SESSION_PATH, sessionField } from './describe';

const R = 'contact';
const CONTACT_PATH = `${SESSION_PATH}/contacts/${seg('contactJid')}`;

export const contactProperties: INodeProperties[] = [
  operationsOf(R, [
    { value: 'check', name: 'Check Numbers', action: 'Check whether numbers are on WhatsApp', method: 'POST', url: `=${SESSION_PATH}/contacts:check`, list: true },
    { value: 'list', name: 'Get Many', action: 'Get many contacts', method: 'GET', url: `=${SESSION_PATH}/contacts`, list: true },
    { value: 'get', name: 'Get', action: 'Get a contact', method: 'GET', url: `=${CONTACT_PATH}`, description: 'With about and picture URL' },
    { value: 'block', name: 'Block', action: 'Block a contact', method: 'POST', url: `=${CONTACT_PATH}:block` },
    { value: 'unblock', name: 'Unblock', action: 'Unblock a contact', method: 'POST', url: `=${CONTACT_PATH}:unblock` },
    { value: 'subscribePresence', name: 'Subscribe to Presence', action: 'Subscribe to a contact presence', method: 'POST', url: `=${CONTACT_PATH}/presence:subscribe`, noContent: true },
  ]),
  sessionField(R),
  required(R, ['check'], 'numbers', 'Phone Numbers', 'numbers', { description: 'Comma-separated, up to 50', routing: { send: { type: 'body', property: 'numbers', value: LIST_VALUE } } }),
  required(R, ['get', 'block', 'unblock', 'subscribePresence'], 'contactJid', 'Contact JID', null, { placeholder: '15551234567@s.whatsapp.net', description: 'A JID or a phone number' }),
  ...paging(R, ['list']),
];
