import 'reflect-metadata';
import { Body, ExecutionContext, Param } from '@nestjs/common';
import { ApiBody } from '@nestjs/swagger';
import { DomainError } from '@app/contracts';
import { RequestBodyGuard, routeBody } from './request-body.guard';

class NoteDto {
  note?: string;
}

class FakeController {
  block(@Param('jid') _jid: string): void {}

  @ApiBody({ type: NoteDto, required: false })
  read(@Body() _body: NoteDto): void {}

  create(@Body() _body: NoteDto): void {}
}

const context = (handler: keyof FakeController, req: { body?: unknown }) =>
  ({ getType: () => 'http', getClass: () => FakeController, getHandler: () => FakeController.prototype[handler], switchToHttp: () => ({ getRequest: () => req }) }) as unknown as ExecutionContext;

const refusal = (fn: () => unknown): DomainError | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return err as DomainError;
  }
};

describe('RequestBodyGuard', () => {
  const guard = new RequestBodyGuard();

  it('reads a route\'s body from its @Body() and @ApiBody({ required })', () => {
    expect(routeBody(FakeController, FakeController.prototype.block)).toBe('none');
    expect(routeBody(FakeController, FakeController.prototype.read)).toBe('optional');
    expect(routeBody(FakeController, FakeController.prototype.create)).toBe('required');
  });

  it('refuses each field sent to an operation without a body, by name', () => {
    const err = refusal(() => guard.canActivate(context('block', { body: { reason: 'spam', x: 1 } })));
    expect(err?.toBody()).toEqual({
      error: { code: 'validation_error', message: 'request is invalid', details: { fields: { reason: ['property reason should not exist'], x: ['property x should not exist'] } } },
    });
    for (const body of [[], 'text', 1, null]) expect(refusal(() => guard.canActivate(context('block', { body })))?.code).toBe('validation_error');
  });

  it('lets no body and {} through to an operation without a body', () => {
    expect(guard.canActivate(context('block', {}))).toBe(true);
    expect(guard.canActivate(context('block', { body: {} }))).toBe(true);
  });

  it('takes a missing optional body as {}, and leaves a required one to the validation pipe', () => {
    const optional: { body?: unknown } = {};
    expect(guard.canActivate(context('read', optional))).toBe(true);
    expect(optional.body).toEqual({});
    const required: { body?: unknown } = {};
    expect(guard.canActivate(context('create', required))).toBe(true);
    expect(required.body).toBeUndefined();
  });
});
