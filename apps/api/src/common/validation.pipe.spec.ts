import { ValidationError } from 'class-validator';
import { fieldErrors } from './validation.pipe';

const error = (property: string, constraints?: Record<string, string>, children: ValidationError[] = []): ValidationError => Object.assign(new ValidationError(), { property, constraints, children });

describe('fieldErrors (the 422 details of the global validation pipe)', () => {
  it('flattens nested errors by dotted path', () => {
    const errors = [error('name', { isString: 'name must be a string' }), error('retryPolicy', undefined, [error('attempts', { max: 'attempts must not be greater than 20' })])];
    expect(fieldErrors(errors)).toEqual({ name: ['name must be a string'], 'retryPolicy.attempts': ['attempts must not be greater than 20'] });
  });

  it('names a property called __proto__ or valueOf like any other (a client chooses the names)', () => {
    const fields = fieldErrors([error('__proto__', { whitelistValidation: 'property __proto__ should not exist' }), error('valueOf', { whitelistValidation: 'property valueOf should not exist' })]);
    expect(Object.keys(fields)).toEqual(['__proto__', 'valueOf']);
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(fields))).toEqual(JSON.parse('{"__proto__": ["property __proto__ should not exist"], "valueOf": ["property valueOf should not exist"]}'));
  });
});
