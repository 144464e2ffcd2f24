import pino from 'pino';
import { EventEmitter } from 'node:events';
import { isoTime, loggerOptions, TurnBatchedDestination, wantsPretty } from './logger';
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
    const req = { method: 'GET', url: '/api/v1/sessions?token=gwk_secret', headers: { authorization: 'Bearer x' } };
    // like Node's ServerResponse, it knows its request
    const res = Object.assign(new EventEmitter(), { req, statusCode: 200, writableFinished: true, setHeader: jest.fn() });
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

  it("writes the request line byte for byte as pino's own call would, bindings and level included", () => {
    const raw: string[] = [];
    const logger = pino(loggerOptions('api', 'info'), { write: (line: string) => void raw.push(line) }).child({ replica: 'r1' });
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 0, 2, 3, 4, 5, 67));
    const clock = jest.spyOn(performance, 'now').mockReturnValueOnce(1000).mockReturnValueOnce(1012.4);
    try {
      for (const [statusCode, writableFinished] of [[200, true], [503, true], [200, false]] as const) {
        const req = { method: 'GET', url: '/api/v1/x\\y"z?token=t', headers: {} };
        const res = Object.assign(new EventEmitter(), { req, statusCode, writableFinished, setHeader: jest.fn() });
        clock.mockReturnValueOnce(1000).mockReturnValueOnce(1012.4);
        requestLogger(logger, () => 'req_"1"')(req as never, res as never, () => undefined);
        res.emit('close');
        const level = statusCode >= 500 ? 'error' : writableFinished ? 'info' : 'warn';
        const msg = writableFinished ? `GET /api/v1/x\\y"z ${statusCode} 12ms` : 'GET /api/v1/x\\y"z aborted after 12ms';
        logger[level]({ req: { id: 'req_"1"', method: 'GET', url: '/api/v1/x\\y"z' }, res: { statusCode }, responseTime: 12 }, msg);
        expect(raw).toHaveLength(2);
        expect(raw[0]).toBe(raw[1]);
        raw.length = 0;
      }
    } finally {
      now.mockRestore();
      clock.mockRestore();
    }
  });

  it("tells `done` about every request with its duration, in the log's one listener, whatever the log level", () => {
    const silent = capture('silent');
    const done = jest.fn();
    const req = { method: 'DELETE', url: '/x', headers: {} };
    const res = Object.assign(new EventEmitter(), { req, statusCode: 204, writableFinished: true, setHeader: jest.fn() });
    requestLogger(silent.logger, () => 'r', done)(req as never, res as never, () => undefined);
    expect(res.listenerCount('close')).toBe(1);
    res.emit('close');
    expect(done).toHaveBeenCalledWith(req, res, expect.any(Number));
    expect(done.mock.calls[0][2]).toBeGreaterThanOrEqual(0);
    expect(silent.lines).toHaveLength(0);
  });

  it('logs a 5xx at error and a request its client abandoned at warn', () => {
    const info = capture('info');
    const log = requestLogger(info.logger, () => 'r');
    const post = { method: 'POST', url: '/x', headers: {} };
    const failed = Object.assign(new EventEmitter(), { req: post, statusCode: 503, writableFinished: true });
    log(post as never, failed as never, () => undefined);
    failed.emit('close');
    const get = { method: 'GET', url: '/y', headers: {} };
    const gone = Object.assign(new EventEmitter(), { req: get, statusCode: 200, writableFinished: false });
    log(get as never, gone as never, () => undefined);
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

  it("formats the time as pino's isoTime does, across seconds and for every width of milliseconds", () => {
    const now = jest.spyOn(Date, 'now');
    try {
      const base = Date.UTC(2026, 11, 31, 23, 59, 58);
      for (const t of [base, base + 5, base + 50, base + 999, base + 1000, base + 1007, base + 1999, base + 2000, base + 2001, base + 1000, base + 61_234]) {
        now.mockReturnValue(t);
        expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
      }
    } finally {
      now.mockRestore();
    }
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

describe('TurnBatchedDestination', () => {
  function fakeOut() {
    return { fd: 1, destroyed: false, write: jest.fn(), flush: jest.fn((cb?: () => void) => cb?.()), flushSync: jest.fn() };
  }

  it("hands the lines of one event-loop turn to the file as one write at the turn's end", async () => {
    const out = fakeOut();
    const dest = new TurnBatchedDestination(out as never);
    dest.write('{"a":1}\n');
    dest.write('{"b":2}\n');
    expect(out.write).not.toHaveBeenCalled();
    await new Promise((r) => setImmediate(r));
    expect(out.write.mock.calls).toEqual([['{"a":1}\n{"b":2}\n']]);
    dest.write('{"c":3}\n');
    await new Promise((r) => setImmediate(r));
    expect(out.write.mock.calls).toEqual([['{"a":1}\n{"b":2}\n'], ['{"c":3}\n']]);
  });

  it("writes the current turn at once when flushed (pino's flush and flushSync), before the file's own flush", () => {
    const out = fakeOut();
    const dest = new TurnBatchedDestination(out as never);
    dest.write('x\n');
    const done = jest.fn();
    pino({}, dest).flush(done);
    expect(out.write.mock.calls).toEqual([['x\n']]);
    expect(out.flush).toHaveBeenCalled();
    expect(done).toHaveBeenCalled();
    dest.write('y\n');
    dest.flushSync();
    expect(out.write.mock.calls).toEqual([['x\n'], ['y\n']]);
    expect(out.flushSync).toHaveBeenCalledTimes(1);
  });
});
