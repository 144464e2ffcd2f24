import type { INodeProperties } from 'n8n-workflow';
import { LIST_VALUE, operationsOf, optional, required, seg, SESSION_PATH, sessionField, show } from './describe';

const R = 'group';
const GROUP_PATH = `${SESSION_PATH}/groups/${seg('groupJid')}`;

export const groupProperties: INodeProperties[] = [
  operationsOf(R, [
    { value: 'list', name: 'Get Many', action: 'Get many groups', method: 'GET', url: `=${SESSION_PATH}/groups`, list: true },
    { value: 'create', name: 'Create', action: 'Create a group', method: 'POST', url: `=${SESSION_PATH}/groups` },
    { value: 'get', name: 'Get', action: 'Get a group', method: 'GET', url: `=${GROUP_PATH}`, description: 'With its participants, fresh from the network' },
    { value: 'update', name: 'Update', action: 'Update a group', method: 'PATCH', url: `=${GROUP_PATH}` },
    { value: 'participants', name: 'Change Participants', action: 'Add remove promote or demote participants', method: 'POST', url: `=${GROUP_PATH}/participants`, list: true },
    { value: 'leave', name: 'Leave', action: 'Leave a group', method: 'POST', url: `=${GROUP_PATH}:leave`, noContent: true },
    { value: 'getInvite', name: 'Get Invite Link', action: 'Get the invite link of a group', method: 'GET', url: `=${GROUP_PATH}/invite` },
    { value: 'revokeInvite', name: 'Revoke Invite Link', action: 'Revoke the invite link of a group', method: 'POST', url: `=${GROUP_PATH}/invite:revoke` },
    { value: 'join', name: 'Join', action: 'Join a group by invite code', method: 'POST', url: `=${SESSION_PATH}/groups:join` },
  ]),
  sessionField(R),
  required(R, ['get', 'update', 'participants', 'leave', 'getInvite', 'revokeInvite'], 'groupJid', 'Group JID', null, { placeholder: '120363…@g.us' }),
  required(R, ['create'], 'groupName', 'Name', 'name'),
  optional('participants', { displayName: 'Participants', name: 'groupParticipants', type: 'string', default: '', description: 'Comma-separated JIDs or phone numbers', displayOptions: show(R, ['create']) }, `={{ $value === "" ? undefined : ${LIST_VALUE.slice(4, -3)} }}`),
  {
    displayName: 'Action',
    name: 'participantAction',
    type: 'options',
    default: 'add',
    options: ['add', 'remove', 'promote', 'demote'].map((a) => ({ name: a.charAt(0).toUpperCase() + a.slice(1), value: a })),
    displayOptions: show(R, ['participants']),
    routing: { send: { type: 'body', property: 'action' } },
  },
  required(R, ['participants'], 'participants', 'Participants', 'participants', { description: 'Comma-separated JIDs or phone numbers', routing: { send: { type: 'body', property: 'participants', value: LIST_VALUE } } }),
  required(R, ['join'], 'inviteCode', 'Invite Code', 'code'),
  {
    displayName: 'Changes',
    name: 'groupChanges',
    type: 'collection',
    placeholder: 'Add Change',
    default: {},
    displayOptions: show(R, ['update']),
    options: [
      optional('subject', { displayName: 'Subject', name: 'subject', type: 'string', default: '' }),
      optional('description', { displayName: 'Description', name: 'description', type: 'string', default: '' }),
      optional('isAnnounce', { displayName: 'Only Admins Send', name: 'isAnnounce', type: 'boolean', default: false }),
      optional('isLocked', { displayName: 'Only Admins Edit Info', name: 'isLocked', type: 'boolean', default: false }),
    ],
  },
];
