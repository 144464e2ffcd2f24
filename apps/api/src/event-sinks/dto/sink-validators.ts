import { ValidationOptions } from 'class-validator';
import { SINK_URL_SCHEMES } from '@app/contracts';
import { destinationUrlProblem, fromProblem } from '../../destinations/dto/destination-validators';

const SCHEMES = Object.values(SINK_URL_SCHEMES).flat();

/** Why a url is not an acceptable broker URL (syntax only; its kind's scheme and its address are the service's), or null. */
export function sinkUrlProblem(value: unknown): string | null {
  const url = destinationUrlProblem(value, SCHEMES, `an absolute broker URL (${SCHEMES.join(', ')})`);
  if (typeof url === 'string') return url;
  if (url.hash) return 'url must not have a fragment';
  return null;
}

export const IsSinkUrl = (options?: ValidationOptions) => fromProblem('isSinkUrl', sinkUrlProblem, options);
