import type { INodeType, INodeTypeDescription, NodeConnectionType } from 'n8n-workflow';
import { chatProperties } from './resources/chat';
import { contactProperties } from './resources/contact';
import { groupProperties } from './resources/group';
import { messageProperties } from './resources/message';
import { sessionProperties } from './resources/session';
import { webhookProperties } from './resources/webhook';
import { CREDENTIAL } from './transport';

/**
 * The gateway's REST API as n8n actions (declarative: each operation is a request n8n builds from the fields).
 * Errors are the API's `{error: {code, message, details}}`, which n8n shows as the node's error.
 */
export class MessagingGateway implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Messaging Gateway',
    name: 'messagingGateway',
    icon: 'file:../../icons/messaging-gateway.svg',
    group: ['output'],
    version: 1,
    subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
    description: 'Send WhatsApp messages and manage sessions, chats, contacts, groups and webhooks of a Messaging Gateway',
    defaults: { name: 'Messaging Gateway' },
    usableAsTool: true,
    inputs: ['main' as NodeConnectionType],
    outputs: ['main' as NodeConnectionType],
    credentials: [{ name: CREDENTIAL, required: true }],
    requestDefaults: {
      baseURL: '={{ $credentials.baseUrl.replace(/\\/+$/, "") }}',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    },
    properties: [
      {
        displayName: 'Resource',
        name: 'resource',
        type: 'options',
        noDataExpression: true,
        default: 'message',
        options: [
          { name: 'Chat', value: 'chat' },
          { name: 'Contact', value: 'contact' },
          { name: 'Group', value: 'group' },
          { name: 'Message', value: 'message' },
          { name: 'Session', value: 'session' },
          { name: 'Webhook', value: 'webhook' },
        ],
      },
      ...messageProperties,
      ...sessionProperties,
      ...chatProperties,
      ...contactProperties,
      ...groupProperties,
      ...webhookProperties,
    ],
  };
}
