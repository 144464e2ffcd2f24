import { jsonInputProblem, MAX_JSON_DEPTH, pathProblem, requestInputProblem } from './input-hardening';

describe('jsonInputProblem', () => {
  it('names the field holding a NUL, at any depth, in strings and keys', () => {
    expect(jsonInputProblem({ label: 'a\u0000b' })?.field).toBe('label');
    expect(jsonInputProblem({ retry: { list: ['ok', 'x\u0000'] } })?.field).toBe('retry.list.1');
    expect(jsonInputProblem({ headers: { 'a\u0000': 'x' } })).toEqual({ field: 'headers', message: expect.stringMatching(/^keys .*NUL/) });
  });

  it('names the field holding a lone UTF-16 surrogate (high or low, in strings and keys), and passes real pairs', () => {
    expect(jsonInputProblem(JSON.parse('{"label":"a\\ud800b"}'))).toEqual({ field: 'label', message: expect.stringMatching(/surrogate/) });
    expect(jsonInputProblem({ list: ['ok', 'x\udfff'] })?.field).toBe('list.1');
    expect(jsonInputProblem({ text: '\udc00\ud800' })?.field).toBe('text'); // a pair in the wrong order is two lone halves
    expect(jsonInputProblem({ headers: { 'a\ud83d': 'x' } })).toEqual({ field: 'headers', message: expect.stringMatching(/^keys .*surrogate/) });
    expect(jsonInputProblem({ text: 'emoji \ud83d\ude00 and 😀' })).toBeNull();
  });

  it('refuses prototype-named keys by name', () => {
    const parsed = JSON.parse('{"customHeaders":{"__proto__":{"x":1}}}');
    expect(jsonInputProblem(parsed)).toEqual({ field: 'customHeaders.__proto__', message: 'key "__proto__" is not allowed' });
    expect(jsonInputProblem({ constructor: 1 })?.field).toBe('constructor');
  });

  it('refuses nesting past the limit without recursing, however deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonInputProblem({ a: deep })?.message).toBe(`must not nest deeper than ${MAX_JSON_DEPTH} levels`);
    let fine: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) fine = { a: fine };
    expect(jsonInputProblem(fine)).toBeNull();
  });

  it('passes ordinary bodies', () => {
    expect(jsonInputProblem({ url: 'https://example.com', customHeaders: { 'X-A': 'café' }, events: ['*'], n: 1, b: null })).toBeNull();
  });
});

describe('pathProblem', () => {
  it('refuses NUL and undecodable percent-encoding in the path', () => {
    expect(pathProblem('/api/v1/sessions/%00')?.message).toMatch(/NUL/);
    expect(pathProblem('/api/v1/sessions/%FF')?.message).toMatch(/UTF-8/);
    expect(pathProblem('/api/v1/sessions/ses_01J%20x')).toBeNull();
  });
});

describe('requestInputProblem', () => {
  /** A request whose `query` counts its reads, as Express 5's getter parses the query string on each one. */
  function request(originalUrl: string, query: Record<string, string>) {
    const reads = { query: 0 };
    const req = {
      originalUrl,
      body: undefined,
      get query() {
        reads.query++;
        return query;
      },
    };
    return { req, reads };
  }

  it('does not parse the query of a URL that has none', () => {
    const { req, reads } = request('/api/v1/webhooks/whk_1', {});
    expect(requestInputProblem(req)).toBeNull();
    expect(reads.query).toBe(0);
  });

  it('still refuses a bad query string, and a bad path before its query', () => {
    const { req, reads } = request('/api/v1/webhooks?x=1', { x: 'a\0b' });
    expect(requestInputProblem(req)).toEqual({ field: 'x', message: expect.stringContaining('NUL') });
    expect(reads.query).toBe(1);
    expect(requestInputProblem(request('/api/v1/%00?x=1', {}).req)?.field).toBe('path');
  });
});
