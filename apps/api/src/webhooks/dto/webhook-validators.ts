import { ValidationOptions } from 'class-validator';
import { FORBIDDEN_CUSTOM_HEADER_PREFIXES, FORBIDDEN_CUSTOM_HEADERS, MAX_CUSTOM_HEADERS_BYTES } from '@app/contracts';
import { destinationUrlProblem, fromProblem } from '../../destinations/dto/destination-validators';

export const MAX_CUSTOM_HEADERS = 50;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const HTTP_SCHEMES = ['https:', 'http:'];

/** Why a url is not an acceptable webhook target (syntax only; addresses are checked by the service), or null. */
export function webhookUrlProblem(value: unknown): string | null {
  const url = destinationUrlProblem(value, HTTP_SCHEMES, 'an absolute http(s) URL');
  if (typeof url === 'string') return url;
  // credentials in a URL end up in logs and attempt records; a receiver that needs them takes customHeaders
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:\/*[^/?#]*@/i.test(value as string)) return 'url must not contain user info (user:pass@)';
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

export const IsWebhookUrl = (options?: ValidationOptions) => fromProblem('isWebhookUrl', webhookUrlProblem, options);
export const IsHeaderMap = (options?: ValidationOptions) => fromProblem('isHeaderMap', customHeadersProblem, options);
