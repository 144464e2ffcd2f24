import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import { SINK_URL_SCHEMES } from '@app/contracts';
import { MAX_URL_LENGTH } from '../../webhooks/dto/webhook-validators';

const SCHEMES = Object.values(SINK_URL_SCHEMES).flat();

/** Why a url is not an acceptable broker URL (syntax only; its kind's scheme and its address are the service's), or null. */
export function sinkUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'url must be a string';
  if (value.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (/[\s\x00-\x1f\x7f]/.test(value)) return 'url must not contain whitespace or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `url must be an absolute broker URL (${SCHEMES.join(', ')})`;
  }
  if (!SCHEMES.includes(url.protocol)) return `url must be an absolute broker URL (${SCHEMES.join(', ')})`;
  if (!url.hostname) return 'url must name a host';
  if (url.hash) return 'url must not have a fragment';
  return null;
}

export const IsSinkUrl = (options?: ValidationOptions) => (object: object, propertyName: string) =>
  registerDecorator({
    name: 'isSinkUrl',
    target: object.constructor,
    propertyName,
    options,
    validator: {
      validate: (v: unknown) => sinkUrlProblem(v) === null,
      defaultMessage: (args: ValidationArguments) => sinkUrlProblem(args.value) ?? 'is invalid',
    },
  });
