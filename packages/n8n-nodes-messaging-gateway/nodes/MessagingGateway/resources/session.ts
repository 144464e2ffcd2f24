import type { INodeProperties } from 'n8n-workflow';
import { operationsOf, optional, paging, required, SESSION_PATH, sessionField, show } from './describe';

const R = 'session';
const ONE = ['get', 'update', 'delete', 'start', 'stop', 'restart', 'logout', 'getQr', 'requestCode', 'getProfile'];

const settings = (operations: string[]): INodeProperties => ({
  displayName: 'Settings',
  name: 'sessionSettings',
  type: 'collection',
  placeholder: 'Add Setting',
  default: {},
  displayOptions: show(R, operations),
  options: [
    optional('label', { displayName: 'Label', name: 'label', type: 'string', default: '' }),
    optional('autoRead', { displayName: 'Auto Read', name: 'autoRead', type: 'boolean', default: true, description: 'Whether received messages are marked read' }),
    optional('presenceTyping', { displayName: 'Presence Typing', name: 'presenceTyping', type: 'boolean', default: false, description: 'Whether "typing…" is shown before each text' }),
    optional('ratePerMin', { displayName: 'Rate per Minute', name: 'ratePerMin', type: 'number', default: 20 }),
    optional('ratePerHour', { displayName: 'Rate per Hour', name: 'ratePerHour', type: 'number', default: 200 }),
    optional('rejectCalls', { displayName: 'Reject Calls', name: 'rejectCalls', type: 'boolean', default: false }),
    optional('receiveStatus', { displayName: 'Receive Status', name: 'receiveStatus', type: 'boolean', default: false, description: 'Whether contacts\' statuses (stories) arrive as status.received events' }),
    optional('syncHistory', {
      displayName: 'Sync History',
      name: 'syncHistory',
      type: 'options',
      default: 'none',
      options: [
        { name: 'None', value: 'none' },
        { name: 'Recent', value: 'recent' },
        { name: 'Full', value: 'full' },
      ],
    }),
    optional('proxyUrl', { displayName: 'Proxy URL', name: 'proxyUrl', type: 'string', default: '' }),
  ],
});

export const sessionProperties: INodeProperties[] = [
  operationsOf(R, [
    { value: 'list', name: 'Get Many', action: 'Get many sessions', method: 'GET', url: '=/api/v1/sessions', list: true },
    { value: 'get', name: 'Get', action: 'Get a session', method: 'GET', url: `=${SESSION_PATH}` },
    { value: 'create', name: 'Create', action: 'Create a session', method: 'POST', url: '=/api/v1/sessions', description: 'Creates a session and starts it: pair it with its QR or a pairing code' },
    { value: 'update', name: 'Update', action: 'Update a session', method: 'PATCH', url: `=${SESSION_PATH}` },
    { value: 'delete', name: 'Delete', action: 'Delete a session', method: 'DELETE', url: `=${SESSION_PATH}`, noContent: true },
    { value: 'start', name: 'Start', action: 'Start a session', method: 'POST', url: `=${SESSION_PATH}:start` },
    { value: 'stop', name: 'Stop', action: 'Stop a session', method: 'POST', url: `=${SESSION_PATH}:stop` },
    { value: 'restart', name: 'Restart', action: 'Restart a session', method: 'POST', url: `=${SESSION_PATH}:restart` },
    { value: 'logout', name: 'Log Out', action: 'Log out a session', method: 'POST', url: `=${SESSION_PATH}:logout`, description: 'Unlinks the device from the phone' },
    { value: 'getQr', name: 'Get QR', action: 'Get the QR code of a session', method: 'GET', url: `=${SESSION_PATH}/qr` },
    { value: 'requestCode', name: 'Request Pairing Code', action: 'Request a pairing code', method: 'POST', url: `=${SESSION_PATH}:request-code` },
    { value: 'getProfile', name: 'Get Profile', action: 'Get the account profile', method: 'GET', url: `=${SESSION_PATH}/profile` },
  ]),
  sessionField(R, ONE),
  required(R, ['create'], 'label', 'Label', 'label'),
  required(R, ['requestCode'], 'phoneNumber', 'Phone Number', 'phoneNumber', { placeholder: '+1 555 123 4567' }),
  settings(['create', 'update']),
  ...paging(R, ['list']),
];
