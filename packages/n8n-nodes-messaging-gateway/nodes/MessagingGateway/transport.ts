import type { IDataObject, IExecuteFunctions, IHookFunctions, IHttpRequestMethods, ILoadOptionsFunctions } from 'n8n-workflow';

export const CREDENTIAL = 'messagingGatewayApi';

export interface GatewayAnswer {
  statusCode: number;
  body: IDataObject;
}

/**
 * One call to the gateway's API with the node's credential, answering the status and the JSON body whatever the
 * status (the trigger's hooks tell a 404 from a failure themselves).
 */
export async function gatewayRequest(
  this: IHookFunctions | IExecuteFunctions | ILoadOptionsFunctions,
  method: IHttpRequestMethods,
  path: string,
  body?: IDataObject,
): Promise<GatewayAnswer> {
  const credentials = await this.getCredentials(CREDENTIAL);
  const baseUrl = String(credentials.baseUrl).replace(/\/+$/, '');
  const answer = (await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL, {
    method,
    url: `${baseUrl}${path}`,
    body,
    json: true,
    returnFullResponse: true,
    ignoreHttpStatusErrors: true,
  })) as { statusCode: number; body: IDataObject | string | undefined };
  return { statusCode: answer.statusCode, body: typeof answer.body === 'object' && answer.body !== null ? answer.body : {} };
}

/** The API's error envelope as one line, for an error n8n shows. */
export function describeFailure(what: string, answer: GatewayAnswer): Error {
  const error = (answer.body.error ?? {}) as IDataObject;
  const details = error.details && Object.keys(error.details as object).length ? ` ${JSON.stringify(error.details)}` : '';
  return new Error(`${what}: HTTP ${answer.statusCode} ${String(error.code ?? '')} ${String(error.message ?? '')}${details}`.trim());
}
