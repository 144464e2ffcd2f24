import pino from 'pino';
import { httpLoggerOptions, loggerOptions, wantsPretty } from './logger';
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

  it('writes request lines with method, path, status, duration and request id, never headers or the query', () => {
    const options = httpLoggerOptions('api', 'info');
    const req = { id: 'req_1', method: 'GET', url: '/api/v1/sessions?token=gwk_secret', headers: { authorization: 'Bearer x' } };
    const res = { statusCode: 200, getHeaders: () => ({ 'x-request-id': 'req_1' }) };
    expect(options.serializers!.req(req)).toEqual({ id: 'req_1', method: 'GET', url: '/api/v1/sessions' });
    expect(options.serializers!.res(res)).toEqual({ statusCode: 200 });
    const message = (options.customSuccessMessage as unknown as (q: typeof req, s: typeof res, ms: number) => string)(req, res, 12.4);
    expect(message).toBe('GET /api/v1/sessions 200 12ms');
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
