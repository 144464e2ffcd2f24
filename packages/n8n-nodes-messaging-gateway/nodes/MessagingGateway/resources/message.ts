import type { IDataObject, IExecuteSingleFunctions, IHttpRequestOptions, INodeProperties } from 'n8n-workflow';
import { CAPTIONED_MESSAGE_TYPES, MEDIA_MESSAGE_TYPES, MESSAGE_TYPES, titleOf } from '../catalog';
import { LIST_VALUE, operationsOf, optional, paging, required, seg, SESSION_PATH, sessionField, show } from './describe';

const R = 'message';
const MESSAGE_PATH = `${SESSION_PATH}/messages/${seg('messageId')}`;
const send = (types: string[], more = {}) => show(R, ['send'], { type: types, ...more });
const body = (property: string, value?: string) => ({ send: { type: 'body' as const, property, ...(value ? { value } : {}) } });

/** Media from an input item's binary property: its bytes as base64, its MIME type and file name unless given. */
async function binaryMedia(this: IExecuteSingleFunctions, request: IHttpRequestOptions): Promise<IHttpRequestOptions> {
  if (this.getNodeParameter('mediaSource', 'url') !== 'binary') return request;
  const property = this.getNodeParameter('binaryProperty', 'data') as string;
  const item = this.getInputData();
  const binary = item.binary?.[property];
  if (!binary) throw new Error(`The input item has no binary property "${property}"`);
  const bytes = await this.helpers.getBinaryDataBuffer(property);
  const payload = request.body as IDataObject;
  const media = (payload.media ?? {}) as IDataObject;
  payload.media = { ...media, base64: bytes.toString('base64'), mimetype: media.mimetype || binary.mimeType, ...(binary.fileName && !media.filename ? { filename: binary.fileName } : {}) };
  return request;
}

/** The send's `Idempotency-Key` header (routing sends only body and query fields by itself). */
async function idempotencyHeader(this: IExecuteSingleFunctions, request: IHttpRequestOptions): Promise<IHttpRequestOptions> {
  const key = this.getNodeParameter('sendOptions.idempotencyKey', '') as string;
  if (key) request.headers = { ...request.headers, 'Idempotency-Key': key };
  return request;
}

export const messageProperties: INodeProperties[] = [
  operationsOf(R, [
    { value: 'send', name: 'Send', action: 'Send a message', method: 'POST', url: `=${SESSION_PATH}/messages`, description: 'Queues a message of any type (202, status queued)' },
    { value: 'list', name: 'Get Many', action: 'Get many messages', method: 'GET', url: `=${SESSION_PATH}/messages`, list: true },
    { value: 'get', name: 'Get', action: 'Get a message', method: 'GET', url: `=${MESSAGE_PATH}` },
    { value: 'downloadMedia', name: 'Download Media', action: 'Download the media of a message', method: 'GET', url: `=${MESSAGE_PATH}/media`, binary: true },
    { value: 'edit', name: 'Edit', action: 'Edit a sent message', method: 'PATCH', url: `=${MESSAGE_PATH}` },
    { value: 'delete', name: 'Delete for Everyone', action: 'Delete a message for everyone', method: 'DELETE', url: `=${MESSAGE_PATH}`, description: 'Revokes an own message, or cancels a scheduled one' },
    { value: 'forward', name: 'Forward', action: 'Forward a message', method: 'POST', url: `=${MESSAGE_PATH}:forward` },
  ]),
  sessionField(R),
  required(R, ['get', 'downloadMedia', 'edit', 'delete', 'forward'], 'messageId', 'Message ID', null, { placeholder: 'msg_…' }),
  required(R, ['send', 'forward'], 'to', 'To', 'to', { placeholder: '15551234567 or 15551234567@s.whatsapp.net or …@g.us', description: 'A phone number, a JID or a group JID' }),
  {
    displayName: 'Type',
    name: 'type',
    type: 'options',
    default: 'text',
    displayOptions: show(R, ['send']),
    options: MESSAGE_TYPES.map((t) => ({ name: titleOf(t.replace('pollVote', 'poll_vote')), value: t })),
    routing: body('type'),
  },
  { displayName: 'Text', name: 'text', type: 'string', typeOptions: { rows: 3 }, required: true, default: '', displayOptions: send(['text']), routing: body('text') },
  { displayName: 'Text', name: 'text', type: 'string', typeOptions: { rows: 3 }, required: true, default: '', displayOptions: show(R, ['edit']), routing: body('text') },
  optional('text', { displayName: 'Caption', name: 'caption', type: 'string', default: '', displayOptions: send(CAPTIONED_MESSAGE_TYPES) }),
  {
    displayName: 'Media Source',
    name: 'mediaSource',
    type: 'options',
    default: 'url',
    displayOptions: send(MEDIA_MESSAGE_TYPES),
    options: [
      { name: 'URL', value: 'url', description: 'The gateway downloads it' },
      { name: 'Binary Property', value: 'binary', description: 'A file of the input item' },
      { name: 'Base64', value: 'base64' },
    ],
    routing: { send: { preSend: [binaryMedia] } },
  },
  { displayName: 'Media URL', name: 'mediaUrl', type: 'string', required: true, default: '', displayOptions: send(MEDIA_MESSAGE_TYPES, { mediaSource: ['url'] }), routing: body('media.url') },
  { displayName: 'Input Binary Field', name: 'binaryProperty', type: 'string', required: true, default: 'data', displayOptions: send(MEDIA_MESSAGE_TYPES, { mediaSource: ['binary'] }) },
  { displayName: 'Base64 Data', name: 'mediaBase64', type: 'string', required: true, default: '', displayOptions: send(MEDIA_MESSAGE_TYPES, { mediaSource: ['base64'] }), routing: body('media.base64') },
  optional('media.mimetype', { displayName: 'MIME Type', name: 'mimetype', type: 'string', default: '', placeholder: 'image/jpeg', description: 'Required for URL and base64; a binary property\'s own type otherwise. Stickers are image/webp.', displayOptions: send(MEDIA_MESSAGE_TYPES) }),
  optional('media.filename', { displayName: 'File Name', name: 'filename', type: 'string', default: '', displayOptions: send(MEDIA_MESSAGE_TYPES) }),
  { displayName: 'Latitude', name: 'latitude', type: 'number', typeOptions: { numberPrecision: 7 }, default: 0, displayOptions: send(['location']), routing: body('location.latitude') },
  { displayName: 'Longitude', name: 'longitude', type: 'number', typeOptions: { numberPrecision: 7 }, default: 0, displayOptions: send(['location']), routing: body('location.longitude') },
  optional('location.name', { displayName: 'Place Name', name: 'locationName', type: 'string', default: '', displayOptions: send(['location']) }),
  optional('location.address', { displayName: 'Address', name: 'locationAddress', type: 'string', default: '', displayOptions: send(['location']) }),
  { displayName: 'Contact Full Name', name: 'contactName', type: 'string', required: true, default: '', displayOptions: send(['contact']), routing: body('contact.fullName') },
  { displayName: 'Contact Phone Number', name: 'contactPhone', type: 'string', required: true, default: '', displayOptions: send(['contact']), routing: body('contact.phoneNumber') },
  { displayName: 'Reacted Message ID', name: 'reactionMessageId', type: 'string', required: true, default: '', placeholder: 'msg_…', displayOptions: send(['reaction']), routing: body('reaction.messageId') },
  { displayName: 'Emoji', name: 'emoji', type: 'string', default: '👍', description: 'One emoji; empty removes the reaction', displayOptions: send(['reaction']), routing: body('reaction.emoji') },
  { displayName: 'Question', name: 'pollName', type: 'string', required: true, default: '', displayOptions: send(['poll']), routing: body('poll.name') },
  { displayName: 'Options', name: 'pollOptions', type: 'string', required: true, default: '', description: 'Comma-separated, 2 to 12', displayOptions: send(['poll']), routing: body('poll.options', LIST_VALUE) },
  { displayName: 'Selectable Count', name: 'selectableCount', type: 'number', default: 1, typeOptions: { minValue: 1, maxValue: 12 }, displayOptions: send(['poll']), routing: body('poll.selectableCount') },
  { displayName: 'Poll Message ID', name: 'pollMessageId', type: 'string', required: true, default: '', placeholder: 'msg_…', displayOptions: send(['pollVote']), routing: body('pollVote.pollMessageId') },
  { displayName: 'Chosen Options', name: 'voteOptions', type: 'string', required: true, default: '', description: 'Comma-separated option names', displayOptions: send(['pollVote']), routing: body('pollVote.options', LIST_VALUE) },
  {
    displayName: 'Options',
    name: 'sendOptions',
    type: 'collection',
    placeholder: 'Add Option',
    default: {},
    displayOptions: show(R, ['send']),
    options: [
      optional('quotedMessageId', { displayName: 'Reply To (Message ID)', name: 'quotedMessageId', type: 'string', default: '', placeholder: 'msg_…' }),
      optional('mentions', { displayName: 'Mentions', name: 'mentions', type: 'string', default: '', description: 'Comma-separated JIDs or phone numbers mentioned in the text' }, `={{ $value === "" ? undefined : ${LIST_VALUE.slice(4, -3)} }}`),
      optional('linkPreview', { displayName: 'Link Preview', name: 'linkPreview', type: 'boolean', default: true }),
      optional('sendAt', { displayName: 'Send At', name: 'sendAt', type: 'dateTime', default: '', description: 'Schedule the message (up to 366 days ahead)' }, '={{ $value === "" ? undefined : new Date($value).getTime() }}'),
      {
        displayName: 'Idempotency Key',
        name: 'idempotencyKey',
        type: 'string',
        default: '',
        description: 'A repeat with the same key within 24 h returns the first message and sends nothing again',
        routing: { send: { preSend: [idempotencyHeader] } },
      },
    ],
  },
  {
    displayName: 'Filters',
    name: 'messageFilters',
    type: 'collection',
    placeholder: 'Add Filter',
    default: {},
    displayOptions: show(R, ['list']),
    options: [
      {
        displayName: 'Direction',
        name: 'direction',
        type: 'options',
        default: 'in',
        options: [
          { name: 'In', value: 'in' },
          { name: 'Out', value: 'out' },
        ],
        routing: { send: { type: 'query', property: 'direction' } },
      },
      { displayName: 'Chat JID', name: 'chatJid', type: 'string', default: '', routing: { send: { type: 'query', property: 'chatJid' } } },
      { displayName: 'Status', name: 'status', type: 'string', default: '', placeholder: 'queued, sent, delivered, read, failed, received…', routing: { send: { type: 'query', property: 'status' } } },
    ],
  },
  ...paging(R, ['list']),
];
