import type { INodeProperties } from 'n8n-workflow';
import { EVENT_TYPES } from '../catalog';
import { operationsOf, optional, paging, required, seg, show } from './describe';

const R = 'webhook';
const WEBHOOK_PATH = `/api/v1/webhooks/${seg('webhookId')}`;
const EVENT_OPTIONS = [{ name: 'All Events (*)', value: '*' }, ...EVENT_TYPES.map((type) => ({ name: type, value: type }))];

const fields = (operations: string[]): INodeProperties[] => [
  optional('events', { displayName: 'Events', name: 'webhookEvents', type: 'multiOptions', default: [], options: EVENT_OPTIONS, displayOptions: show(R, operations), description: 'Empty on create: every event' }, '={{ $value.length ? $value : undefined }}'),
  {
    displayName: 'Settings',
    name: 'webhookSettings',
    type: 'collection',
    placeholder: 'Add Setting',
    default: {},
    displayOptions: show(R, operations),
    options: [
      optional('sessionId', { displayName: 'Session ID', name: 'sessionId', type: 'string', default: '', description: 'Only this session\'s events' }),
      optional('secret', { displayName: 'Secret', name: 'secret', type: 'string', typeOptions: { password: true }, default: '', description: 'HMAC key of the signatures (never shown again)' }),
      optional('active', { displayName: 'Active', name: 'active', type: 'boolean', default: true }),
      optional('rateLimitPerSecond', { displayName: 'Rate Limit per Second', name: 'rateLimitPerSecond', type: 'number', default: 0 }, '={{ $value || undefined }}'),
    ],
  },
];

export const webhookProperties: INodeProperties[] = [
  operationsOf(R, [
    { value: 'list', name: 'Get Many', action: 'Get many webhooks', method: 'GET', url: '=/api/v1/webhooks', list: true },
    { value: 'get', name: 'Get', action: 'Get a webhook', method: 'GET', url: `=${WEBHOOK_PATH}` },
    { value: 'create', name: 'Create', action: 'Create a webhook', method: 'POST', url: '=/api/v1/webhooks' },
    { value: 'update', name: 'Update', action: 'Update a webhook', method: 'PATCH', url: `=${WEBHOOK_PATH}` },
    { value: 'delete', name: 'Delete', action: 'Delete a webhook', method: 'DELETE', url: `=${WEBHOOK_PATH}`, noContent: true },
    { value: 'test', name: 'Send Test Event', action: 'Send a test event to a webhook', method: 'POST', url: `=${WEBHOOK_PATH}:test` },
    { value: 'deliveries', name: 'Get Deliveries', action: 'Get the deliveries of a webhook', method: 'GET', url: `=${WEBHOOK_PATH}/deliveries`, list: true },
    { value: 'replay', name: 'Replay Delivery', action: 'Replay a delivery', method: 'POST', url: `=${WEBHOOK_PATH}/deliveries/${seg('deliveryId')}:replay` },
  ]),
  required(R, ['get', 'update', 'delete', 'test', 'deliveries', 'replay'], 'webhookId', 'Webhook ID', null, { placeholder: 'whk_…' }),
  required(R, ['create'], 'webhookUrl', 'URL', 'url', { placeholder: 'https://example.com/hooks/whatsapp' }),
  optional('url', { displayName: 'New URL', name: 'newUrl', type: 'string', default: '', displayOptions: show(R, ['update']) }),
  required(R, ['replay'], 'deliveryId', 'Delivery ID', null),
  ...fields(['create', 'update']),
  {
    displayName: 'Status',
    name: 'deliveryStatus',
    type: 'string',
    default: '',
    placeholder: 'pending, delivering, delivered, dead',
    displayOptions: show(R, ['deliveries']),
    routing: { send: { type: 'query', property: 'status', value: '={{ $value === "" ? undefined : $value }}' } },
  },
  ...paging(R, ['list', 'deliveries']),
];
