import { CommandRequest, DomainError } from '@app/contracts';
import { runCommand } from './command-bus';

const request = (deadline: number): CommandRequest => ({ name: 'session.start', args: { sessionId: 'ses_1' }, deadline });

describe('runCommand', () => {
  it('does not execute a command past its deadline', async () => {
    const execute = jest.fn();
    const reply = await runCommand({ execute }, request(1_000), () => 1_001);
    expect(execute).not.toHaveBeenCalled();
    expect(reply).toMatchObject({ ok: false, error: { code: 'gateway_unavailable' } });
  });

  it('replies with the result', async () => {
    const reply = await runCommand({ execute: async () => ({ sessionId: 'ses_1', status: 'starting' }) as never }, request(2_000), () => 1_000);
    expect(reply).toEqual({ ok: true, result: { sessionId: 'ses_1', status: 'starting' } });
  });

  it('carries domain errors and hides unexpected ones', async () => {
    const domain = await runCommand({ execute: async () => { throw new DomainError('not_implemented', 'not connected', { status: 'stopped' }); } }, request(2_000), () => 1_000);
    expect(domain).toEqual({ ok: false, error: { code: 'not_implemented', message: 'not connected', details: { status: 'stopped' } } });
    const seen: unknown[] = [];
    const internal = await runCommand({ execute: async () => { throw new Error('db password leaked'); } }, request(2_000), () => 1_000, (e) => seen.push(e));
    expect(internal).toMatchObject({ ok: false, error: { code: 'internal' } });
    expect(JSON.stringify(internal)).not.toContain('password');
    expect(seen).toHaveLength(1);
  });
});
