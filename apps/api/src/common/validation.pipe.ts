import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError } from '@app/contracts';

/**
 * Flattens class-validator errors into `{ "retryPolicy.attempts": ["…"] }`. Built as own properties (fromEntries), so a
 * client's property named `__proto__` is named like any other instead of setting the object's prototype.
 */
export function fieldErrors(errors: ValidationError[], parent = ''): Record<string, string[]> {
  return Object.fromEntries(fieldErrorEntries(errors, parent));
}

function fieldErrorEntries(errors: ValidationError[], parent: string, out: Array<[string, string[]]> = []): Array<[string, string[]]> {
  for (const e of errors) {
    const path = parent ? `${parent}.${e.property}` : e.property;
    if (e.constraints) out.push([path, Object.values(e.constraints)]);
    if (e.children?.length) fieldErrorEntries(e.children, path, out);
  }
  return out;
}

/**
 * The global pipe: whitelist + forbid unknown fields + transform, every failure a 422 validation_error with
 * per-field details; a body that is not a JSON object is refused before any field is looked at.
 */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      forbidUnknownValues: true,
      exceptionFactory: (errors) => new DomainError('validation_error', 'request is invalid', { fields: fieldErrors(errors) }),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new DomainError('validation_error', 'request body must be a JSON object', { fields: { body: ['must be a JSON object'] } });
      }
    }
    return super.transform(value, metadata);
  }
}
