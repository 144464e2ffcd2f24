import { registerDecorator, ValidationOptions } from 'class-validator';
import { cidrProblem } from '@app/net-guard';

/** An IPv4 or IPv6 address or CIDR range (`203.0.113.0/24`, `2001:db8::/32`). */
export function IsCidr(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isCidr',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must hold IPv4/IPv6 addresses or CIDR ranges`, ...options },
      validator: { validate: (value: unknown) => typeof value === 'string' && value.length <= 64 && cidrProblem(value) === null },
    });
}
