import type { IAuthenticateGeneric, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * An API key of the gateway (`gwk_…`, CONTRACT 2), sent as `Authorization: Bearer`. n8n's "Test" on save calls
 * `GET /api/v1/auth/me`, which answers any valid key (whatever its permissions) and 401 for a wrong or revoked one.
 */
export class MessagingGatewayApi implements ICredentialType {
  name = 'messagingGatewayApi';

  displayName = 'Messaging Gateway API';

  icon = 'file:../icons/messaging-gateway.svg' as const;

  documentationUrl = 'https://github.com/messaging-gateway/messaging-gateway/blob/main/docs/integrations/n8n.md';

  properties: INodeProperties[] = [
    {
      displayName: 'Base URL',
      name: 'baseUrl',
      type: 'string',
      default: 'http://localhost:3000',
      placeholder: 'https://gateway.example.com',
      description: 'Where the gateway\'s API answers (without /api/v1)',
      required: true,
    },
    {
      displayName: 'API Key',
      name: 'apiKey',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      placeholder: 'gwk_…',
      description: 'An API key of your organization. The trigger needs webhooks:manage; sending needs messages:send.',
      required: true,
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: {
      headers: { Authorization: '=Bearer {{$credentials.apiKey}}' },
    },
  };

  test: ICredentialTestRequest = {
    request: {
      baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
      url: '/api/v1/auth/me',
      method: 'GET',
    },
  };
}
