import type {
  DeclarativeRestApiSettings,
  IDataObject,
  IDisplayOptions,
  IExecutePaginationFunctions,
  IHttpRequestMethods,
  IHttpRequestOptions,
  INodeExecutionData,
  INodeProperties,
  INodePropertyOptions,
  PostReceiveAction,
} from 'n8n-workflow';
import { CREDENTIAL } from '../transport';

/**
 * A small vocabulary for the declarative (routing) description: each resource lists its operations (method + path)
 * and its fields (what each sends where), and these helpers turn them into n8n's properties.
 */
export interface Operation {
  value: string;
  name: string;
  action: string;
  method: IHttpRequestMethods;
  /** an n8n expression path under the base URL, e.g. `=/api/v1/sessions/{{…}}` */
  url: string;
  description?: string;
  /** a page `{data, nextCursor}`: items are its `data`, "Return All" follows `nextCursor` */
  list?: boolean;
  /** 204 No Content: the item says `{success: true}` */
  noContent?: boolean;
  /** the answer is a file: the item carries it as binary `data` */
  binary?: boolean;
}

export const show = (resource: string, operations: string[], more: IDisplayOptions['show'] = {}): IDisplayOptions => ({
  show: { resource: [resource], operation: operations, ...more },
});

/** `$parameter.<name>` encoded for a path segment (a JID carries `@`, a session id is plain). */
export const seg = (name: string) => `{{encodeURIComponent($parameter["${name}"])}}`;
export const SESSION_PATH = `/api/v1/sessions/${seg('sessionId')}`;

const pageItems: PostReceiveAction = { type: 'rootProperty', properties: { property: 'data' } };
const done: PostReceiveAction = { type: 'set', properties: { value: '={{ { "success": true } }}' } };

export function operationsOf(resource: string, operations: Operation[]): INodeProperties {
  const options: INodePropertyOptions[] = operations.map((op) => ({
    name: op.name,
    value: op.value,
    action: op.action,
    description: op.description,
    routing: {
      request: { method: op.method, url: op.url, ...(op.binary ? { encoding: 'arraybuffer' as const, json: false } : {}) },
      ...(op.list ? { output: { postReceive: [pageItems] } } : {}),
      ...(op.noContent ? { output: { postReceive: [done] } } : {}),
      ...(op.binary ? { output: { postReceive: [{ type: 'binaryData', properties: { destinationProperty: 'data' } } as PostReceiveAction] } } : {}),
    },
  }));
  return {
    displayName: 'Operation',
    name: 'operation',
    type: 'options',
    noDataExpression: true,
    displayOptions: { show: { resource: [resource] } },
    options,
    default: operations[0].value,
  };
}

/**
 * "Return All": pages of 100 in a row, each asking for the `nextCursor` the last one gave, with the operation's own
 * query (filters) kept; the items are the pages' `data` entries.
 */
async function followCursor(this: IExecutePaginationFunctions, requestData: DeclarativeRestApiSettings.ResultOptions): Promise<INodeExecutionData[]> {
  const items: INodeExecutionData[] = [];
  let cursor: string | null = null;
  do {
    const qs: IDataObject = { ...requestData.options.qs, limit: 100, ...(cursor ? { cursor } : {}) };
    const page = (await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL, { ...requestData.options, qs, json: true, returnFullResponse: false } as IHttpRequestOptions)) as {
      data?: IDataObject[];
      nextCursor?: string | null;
    };
    items.push(...(page.data ?? []).map((json) => ({ json })));
    cursor = page.nextCursor ?? null;
  } while (cursor);
  return items;
}

/** "Return All" and "Limit" for the list operations: pages of up to 100 followed by their `nextCursor`. */
export function paging(resource: string, operations: string[]): INodeProperties[] {
  return [
    {
      displayName: 'Return All',
      name: 'returnAll',
      type: 'boolean',
      default: false,
      description: 'Whether to return all results or only up to a given limit',
      displayOptions: show(resource, operations),
      routing: {
        send: { paginate: '={{ $value }}' },
        operations: { pagination: followCursor },
      },
    },
    {
      displayName: 'Limit',
      name: 'limit',
      type: 'number',
      typeOptions: { minValue: 1, maxValue: 100 },
      default: 50,
      description: 'Max number of results to return',
      displayOptions: show(resource, operations, { returnAll: [false] }),
      routing: { send: { type: 'query', property: 'limit' }, output: { maxResults: '={{ $value }}' } },
    },
  ];
}

/** The session every operation but a few acts on, picked from the organization's sessions. */
export function sessionField(resource: string, operations?: string[]): INodeProperties {
  return {
    displayName: 'Session Name or ID',
    name: 'sessionId',
    type: 'options',
    required: true,
    default: '',
    description: 'The session (a linked WhatsApp account). Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
    typeOptions: {
      loadOptions: {
        routing: {
          request: { method: 'GET', url: '/api/v1/sessions', qs: { limit: 100 } },
          output: {
            postReceive: [
              pageItems,
              { type: 'setKeyValue', properties: { name: '={{ $responseItem.label }} ({{ $responseItem.status }})', value: '={{ $responseItem.id }}' } },
              { type: 'sort', properties: { key: 'name' } },
            ],
          },
        },
      },
    },
    displayOptions: operations ? show(resource, operations) : { show: { resource: [resource] } },
  };
}

/** A required string sent as `property` (body by default). */
export function required(resource: string, operations: string[], name: string, displayName: string, property: string | null, extra: Partial<INodeProperties> = {}): INodeProperties {
  return {
    displayName,
    name,
    type: 'string',
    required: true,
    default: '',
    displayOptions: show(resource, operations),
    ...(property ? { routing: { send: { type: 'body', property } } } : {}),
    ...extra,
  } as INodeProperties;
}

/** An optional field: sent only when set (an empty string or an untouched default sends nothing). */
export function optional(property: string, p: Omit<INodeProperties, 'routing'>, value?: string): INodeProperties {
  return { ...p, routing: { send: { type: 'body', property, value: value ?? '={{ $value === "" ? undefined : $value }}' } } } as INodeProperties;
}

/** Comma-separated values as an array (phone numbers, JIDs, option names). */
export const LIST_VALUE = '={{ String($value).split(",").map(v => v.trim()).filter(v => v) }}';
