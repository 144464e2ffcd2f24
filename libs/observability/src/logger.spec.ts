import pino from 'pino';
import { EventEmitter } from 'node:events';
import { loggerOptions, wantsPretty } from './logger';
import { PinoNestLogger, requestLogger } from './request-log';
import { startupFailureLine } from './lifecycle';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(loggerOptions('api', level), { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('logger', () => {
  it("keeps Nest's per-module and per-route boot lines out of info, and shows them at debug", () => {
    const info = capture('info');
    info.logger.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/sessions, GET} route');
    info.logger.info({ context: 'InstanceLoader' }, 'AppModule dependencies initialized');
    info.logger.info({ context: 'NestApplication' }, 'Nest application successfully started');
    info.logger.warn({ context: 'RouterExplorer' }, 'a warning is never hidden');
    expect(info.lines.map((l) => l.msg)).toEqual(['Nest application successfully started', 'a warning is never hidden']);
    const debug = capture('debug');
    debug.logger.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/sessions, GET} route');
    expect(debug.lines).toHaveLength(1);
  });

  it('writes one request line with method, path, status, duration and request id, never headers or the query', () => {
    const info = capture('info');
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true, setHeader: jest.fn() });
    const req = { method: 'GET', url: '/api/v1/sessions?token=gwk_secret', headers: { authorization: 'Bearer x' } };
    const next = jest.fn();
    requestLogger(info.logger, () => 'req_1')(req as never, res as never, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(info.lines).toHaveLength(0);
    res.emit('close');
    expect(info.lines).toHaveLength(1);
    const line = info.lines[0];
    expect(line).toMatchObject({ level: 30, req: { id: 'req_1', method: 'GET', url: '/api/v1/sessions' }, res: { statusCode: 200 } });
    expect(line.msg).toMatch(/^GET \/api\/v1\/sessions 200 \d+ms$/);
    expect(JSON.stringify(line)).not.toContain('secret');
    expect(JSON.stringify(line)).not.toContain('Bearer');
  });

  it('logs a 5xx at error and a request its client abandoned at warn', () => {
    const info = capture('info');
    const log = requestLogger(info.logger, () => 'r');
    const failed = Object.assign(new EventEmitter(), { statusCode: 503, writableFinished: true });
    log({ method: 'POST', url: '/x', headers: {} } as never, failed as never, () => undefined);
    failed.emit('close');
    const gone = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false });
    log({ method: 'GET', url: '/y', headers: {} } as never, gone as never, () => undefined);
    gone.emit('close');
    expect(info.lines.map((l) => [l.level, String(l.msg).split(' ').slice(0, 3).join(' ')])).toEqual([
      [50, 'POST /x 503'],
      [40, 'GET /y aborted'],
    ]);
  });

  it("speaks Nest's logger interface: context as a field, an error's stack kept", () => {
    const info = capture('debug');
    const nest = new PinoNestLogger(info.logger);
    nest.log('booted', 'NestApplication');
    nest.error('boom', 'Error: boom\n    at x', 'errors');
    nest.warn({ msg: 'structured', requestId: 'q1' }, 'errors');
    nest.verbose('hidden at debug');
    expect(info.lines).toEqual([
      expect.objectContaining({ level: 30, context: 'NestApplication', msg: 'booted' }),
      expect.objectContaining({ level: 50, context: 'errors', msg: 'boom', err: { stack: 'Error: boom\n    at x' } }),
      expect.objectContaining({ level: 40, context: 'errors', msg: 'structured', requestId: 'q1' }),
    ]);
  });

  it('is JSON unless asked for pretty or writing to a terminal', () => {
    expect(wantsPretty('json', 1)).toBe(false);
    expect(wantsPretty('pretty', 1)).toBe(true);
    // jest's workers write to pipes, not terminals
    expect(wantsPretty('auto', 99)).toBe(false);
  });
});

describe('startupFailureLine', () => {
  it('names the variable that moves a port in use, and gives any other failure its message only', () => {
    const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use 0.0.0.0:3000'), { code: 'EADDRINUSE', port: 3000 });
    expect(startupFailureLine('api', inUse, 'PORT')).toBe('api: port 3000 is already in use; set PORT to a free port (or stop what listens there)');
    expect(startupFailureLine('gateway', new Error('connect ECONNREFUSED 127.0.0.1:6379'), 'GATEWAY_HEALTH_PORT')).toBe(
      'gateway failed to start: connect ECONNREFUSED 127.0.0.1:6379',
    );
  });
});
