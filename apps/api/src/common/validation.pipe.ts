import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError } from '@app/contracts';

/**
 * Flattens class-validator errors into `{ "retryPolicy.attempts": ["…"] }`. Built as own properties (fromEntries), so a
 * client's property named `__proto__` is named like any other instead of setting the object's prototype.
 */
export function fieldErrors(errors: ValidationError[], parent = ''): Record<string, string[]> {
  return Object.fromEntries(fieldErrorEntries(errors, parent));
}

function fieldErrorEntries(errors: ValidationError[], parent: string): Array<[string, string[]]> {
  return errors.flatMap((e) => {
    const path = parent ? `${parent}.${e.property}` : e.property;
    return [...(e.constraints ? [[path, Object.values(e.constraints)] as [string, string[]]] : []), ...(e.children?.length ? fieldErrorEntries(e.children, path) : [])];
  });
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
