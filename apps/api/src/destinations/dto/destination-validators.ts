import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import { EVENT_TYPES } from '@app/contracts';

export const MAX_URL_LENGTH = 2048;

/**
 * The checks every destination URL gets (a webhook's, a broker's): a string, not too long, no whitespace or control
 * characters, absolute with one of `schemes` and a host. The parsed URL for the kind's own checks, or why not.
 */
export function destinationUrlProblem(value: unknown, schemes: readonly string[], expected: string): URL | string {
  if (typeof value !== 'string') return 'url must be a string';
  if (value.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  // the URL parser would silently strip or encode these, so what is stored would differ from what was given
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (/[\s\x00-\x1f\x7f]/.test(value)) return 'url must not contain whitespace or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `url must be ${expected}`;
  }
  if (!schemes.includes(url.protocol)) return `url must be ${expected}`;
  if (!url.hostname) return 'url must name a host';
  return url;
}

/** A class-validator decorator from a function that says why a value is refused (null: accepted). */
export function fromProblem(name: string, problem: (v: unknown) => string | null, options?: ValidationOptions) {
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

/** The names a destination may subscribe to: `*` (every event) and the catalog's types; a typo would never fire. */
export const WEBHOOK_EVENT_NAMES: readonly string[] = ['*', ...EVENT_TYPES];

/** Why an events list names something outside the catalog, or null (the array shape is checked beside it). */
export function webhookEventsProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return null;
  const unknown = value.filter((e) => typeof e === 'string' && e !== '' && !WEBHOOK_EVENT_NAMES.includes(e));
  if (unknown.length === 0) return null;
  return `events has unknown names (${unknown.slice(0, 5).map((e) => JSON.stringify(e)).join(', ')}); known: ${WEBHOOK_EVENT_NAMES.join(', ')}`;
}

export const IsWebhookEvents = (options?: ValidationOptions) => fromProblem('isWebhookEvents', webhookEventsProblem, options);
