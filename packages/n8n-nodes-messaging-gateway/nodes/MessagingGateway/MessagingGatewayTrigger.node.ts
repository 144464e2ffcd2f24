import type {
  IDataObject,
  IHookFunctions,
  INodeType,
  INodeTypeDescription,
  IWebhookFunctions,
  IWebhookResponseData,
  NodeConnectionType,
} from 'n8n-workflow';
import { EVENT_TYPES, titleOf } from './catalog';
import { newWebhookSecret, signatureProblem } from './signature';
import { CREDENTIAL, describeFailure, gatewayRequest } from './transport';

/**
 * Starts a workflow for each event the gateway delivers. Activating the workflow registers a webhook at the gateway
 * (`POST /api/v1/webhooks`) for the chosen events, with a fresh secret kept in the workflow's static data;
 * deactivating deletes it. Every delivery's Standard Webhooks signature is checked against that secret: a request
 * without a valid, fresh signature is answered 401 and starts nothing.
 */
export class MessagingGatewayTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Messaging Gateway Trigger',
    name: 'messagingGatewayTrigger',
    icon: 'file:../../icons/messaging-gateway.svg',
    group: ['trigger'],
    version: 1,
    subtitle: '={{$parameter["events"].join(", ")}}',
    description: 'Starts the workflow when the WhatsApp gateway sends an event (message received, status, ...)',
    defaults: { name: 'Messaging Gateway Trigger' },
    inputs: [],
    outputs: ['main' as NodeConnectionType],
    credentials: [{ name: CREDENTIAL, required: true }],
    webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
    properties: [
      {
        displayName: 'Events',
        name: 'events',
        type: 'multiOptions',
        required: true,
        default: ['message.received'],
        description: 'The events that start the workflow',
        options: [
          { name: 'All Events (*)', value: '*' },
          ...EVENT_TYPES.map((type) => ({ name: `${titleOf(type)} (${type})`, value: type })),
        ],
      },
      {
        displayName: 'Session ID',
        name: 'sessionId',
        type: 'string',
        default: '',
        placeholder: 'ses_…',
        description: 'Only this session\'s events; empty for every session of the organization',
      },
    ],
  };

  webhookMethods = {
    default: {
      async checkExists(this: IHookFunctions): Promise<boolean> {
        const data = this.getWorkflowStaticData('node');
        if (!data.webhookId || !data.secret) return false;
        const answer = await gatewayRequest.call(this, 'GET', `/api/v1/webhooks/${encodeURIComponent(String(data.webhookId))}`);
        if (answer.statusCode === 404) {
          delete data.webhookId;
          delete data.secret;
          return false;
        }
        if (answer.statusCode !== 200) throw describeFailure('Reading the webhook failed', answer);
        const wanted = wantedWebhook(this);
        const hook = answer.body;
        const same =
          hook.url === this.getNodeWebhookUrl('default') &&
          hook.active === true &&
          (hook.sessionId ?? null) === (wanted.sessionId ?? null) &&
          JSON.stringify([...((hook.events as string[]) ?? [])].sort()) === JSON.stringify([...wanted.events].sort());
        if (same) return true;
        // the node's settings changed since: the old webhook goes, create() registers the new one
        await gatewayRequest.call(this, 'DELETE', `/api/v1/webhooks/${encodeURIComponent(String(data.webhookId))}`);
        delete data.webhookId;
        delete data.secret;
        return false;
      },

      async create(this: IHookFunctions): Promise<boolean> {
        const data = this.getWorkflowStaticData('node');
        const secret = newWebhookSecret();
        const answer = await gatewayRequest.call(this, 'POST', '/api/v1/webhooks', { ...wantedWebhook(this), secret });
        if (answer.statusCode !== 201) throw describeFailure('Registering the webhook at the gateway failed', answer);
        data.webhookId = answer.body.id;
        data.secret = secret;
        return true;
      },

      async delete(this: IHookFunctions): Promise<boolean> {
        const data = this.getWorkflowStaticData('node');
        if (!data.webhookId) return true;
        const answer = await gatewayRequest.call(this, 'DELETE', `/api/v1/webhooks/${encodeURIComponent(String(data.webhookId))}`);
        // 404: deleted already (by hand, or with its organization); either way it sends nothing more
        if (answer.statusCode !== 204 && answer.statusCode !== 404) return false;
        delete data.webhookId;
        delete data.secret;
        return true;
      },
    },
  };

  async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
    const data = this.getWorkflowStaticData('node');
    const req = this.getRequestObject() as unknown as { rawBody?: Buffer; headers: Record<string, string | string[] | undefined> };
    const problem = data.secret ? signatureProblem(String(data.secret), req.headers, req.rawBody) : 'this trigger has no webhook registered';
    if (problem) {
      const res = this.getResponseObject();
      res.status(401).json({ error: { code: 'unauthorized', message: `signature check failed: ${problem}`, details: {} } });
      return { noWebhookResponse: true };
    }
    const envelope = this.getBodyData() as IDataObject;
    const events = this.getNodeParameter('events', []) as string[];
    // the gateway sends only the chosen events; webhook.test (POST /webhooks/{id}:test) comes whatever they are
    if (!events.includes('*') && envelope.event !== 'webhook.test' && !events.includes(String(envelope.event))) return {};
    return { workflowData: [this.helpers.returnJsonArray([envelope])] };
  }
}

function wantedWebhook(ctx: IHookFunctions): { url: string; events: string[]; sessionId?: string } {
  const events = ctx.getNodeParameter('events', []) as string[];
  const sessionId = (ctx.getNodeParameter('sessionId', '') as string).trim();
  const url = ctx.getNodeWebhookUrl('default');
  if (!url) throw new Error('n8n did not give this trigger a webhook URL');
  if (events.length === 0) throw new Error('Choose at least one event');
  return { url, events: events.includes('*') ? ['*'] : events, ...(sessionId ? { sessionId } : {}) };
}
