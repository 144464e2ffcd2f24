import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import { EVENT_TYPES, FORBIDDEN_CUSTOM_HEADER_PREFIXES, FORBIDDEN_CUSTOM_HEADERS, MAX_CUSTOM_HEADERS_BYTES } from '@app/contracts';

export const MAX_URL_LENGTH = 2048;
export const MAX_CUSTOM_HEADERS = 50;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why a url is not an acceptable webhook target (syntax only; addresses are checked by the service), or null. */
export function webhookUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'url must be a string';
  if (value.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  // the URL parser would silently strip or encode these, so what is stored would differ from what was given
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (/[\s\x00-\x1f\x7f]/.test(value)) return 'url must not contain whitespace or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'url must be an absolute http(s) URL';
  if (!url.hostname) return 'url must name a host';
  // credentials in a URL end up in logs and attempt records; a receiver that needs them takes customHeaders
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:\/*[^/?#]*@/i.test(value)) return 'url must not contain user info (user:pass@)';
  return null;
}

/** Why a customHeaders value is not acceptable, or null. */
export function customHeadersProblem(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'customHeaders must be an object of string to string';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_CUSTOM_HEADERS) return `customHeaders may hold at most ${MAX_CUSTOM_HEADERS} entries`;
  let wireBytes = 0;
  for (const [name, v] of entries) {
    if (!TOKEN.test(name) || name.length > 256) return `customHeaders name "${name}" is not a valid header name`;
    const lower = name.toLowerCase();
    if (FORBIDDEN_CUSTOM_HEADERS.includes(lower) || FORBIDDEN_CUSTOM_HEADER_PREFIXES.some((p) => lower.startsWith(p))) {
      return `customHeaders may not set ${name}`;
    }
    if (typeof v !== 'string') return `customHeaders value of "${name}" must be a string`;
    if (/[\r\n\0]/.test(v)) return `customHeaders value of "${name}" may not contain CR, LF or NUL`;
    // what the HTTP client will put on the wire: Latin-1 without control characters except HTAB (RFC 9110 5.5)
    if (!HEADER_VALUE.test(v)) return `customHeaders value of "${name}" must hold only visible Latin-1 characters, spaces and tabs`;
    if (v.length > 4096) return `customHeaders value of "${name}" is longer than 4096 characters`;
    // Latin-1 only (checked above): one byte per character on the wire
    wireBytes += name.length + 2 + v.length + 2;
  }
  if (wireBytes > MAX_CUSTOM_HEADERS_BYTES) {
    return `customHeaders take ${wireBytes} bytes as sent ("Name: value" lines); at most ${MAX_CUSTOM_HEADERS_BYTES} are accepted, so receivers do not refuse the request for its headers`;
  }
  return null;
}

function fromProblem(name: string, problem: (v: unknown) => string | null, options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName,
      options,
      validator: {
        validate: (v: unknown) => problem(v) === null,
        defaultMessage: (args: ValidationArguments) => problem(args.value) ?? 'is invalid',
      },
    });
}

export const IsWebhookUrl = (options?: ValidationOptions) => fromProblem('isWebhookUrl', webhookUrlProblem, options);
export const IsHeaderMap = (options?: ValidationOptions) => fromProblem('isHeaderMap', customHeadersProblem, options);

/** The names a webhook may subscribe to: `*` (every event) and the catalog's types; a typo would never fire. */
export const WEBHOOK_EVENT_NAMES: readonly string[] = ['*', ...EVENT_TYPES];

/** Why an events list names something outside the catalog, or null (the array shape is checked beside it). */
export function webhookEventsProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return null;
  const unknown = value.filter((e) => typeof e === 'string' && e !== '' && !WEBHOOK_EVENT_NAMES.includes(e));
  if (unknown.length === 0) return null;
  return `events has unknown names (${unknown.slice(0, 5).map((e) => JSON.stringify(e)).join(', ')}); known: ${WEBHOOK_EVENT_NAMES.join(', ')}`;
}

export const IsWebhookEvents = (options?: ValidationOptions) => fromProblem('isWebhookEvents', webhookEventsProblem, options);
