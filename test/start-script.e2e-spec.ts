import { freePort, holdPort, runToExit } from './support/processes';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is plain Node, shared with `npm start`
const start = require('../scripts/start.js') as {
  demoIsolation(path: string): Record<'DATABASE_URL' | 'REDIS_KEY_PREFIX' | 'GATEWAY_ID', string>;
  bannerLines(input: { base: string; demo: boolean; apiKey: string | null; sim: string; org: string | null; login: { email: string; password: string } }): string[];
};

/** `npm start` / `npm run demo` as a newcomer meets them: where things are, what to run next, and clear refusals. */
describe('scripts/start.js', () => {
  it("gives two clones' demos their own database, Redis namespace and gateway id, stable per clone", () => {
    const a = start.demoIsolation('/home/me/gateway');
    const b = start.demoIsolation('/home/me/gateway-copy');
    for (const key of ['DATABASE_URL', 'REDIS_KEY_PREFIX', 'GATEWAY_ID'] as const) expect(a[key]).not.toBe(b[key]);
    expect(start.demoIsolation('/home/me/gateway')).toEqual(a);
    expect(a.DATABASE_URL).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:5432\/gateway_demo_[0-9a-f]{8}$/);
  });

  it('ends with a banner naming the API, docs and dashboard URLs and the next command', () => {
    const login = { email: 'demo@example.test', password: 'demo-password' };
    const fresh = start.bannerLines({ base: 'http://127.0.0.1:3000', demo: false, apiKey: null, sim: '', org: null, login }).join('\n');
    expect(fresh).toContain('http://127.0.0.1:3000/api/v1');
    expect(fresh).toContain('http://127.0.0.1:3000/api/docs');
    expect(fresh).toContain('http://127.0.0.1:3000/dashboard/');
    expect(fresh).toContain('npm run -s cli -- org:create --name Acme');
    expect(fresh).toContain('--with-key');
    const demo = start.bannerLines({ base: 'http://127.0.0.1:3000', demo: true, apiKey: 'gwk_abc', sim: 'http://127.0.0.1:4010', org: 'org_1', login }).join('\n');
    expect(demo).toContain('export TOKEN=gwk_abc');
    expect(demo).toContain('/sim/sessions/<sessionId>/scan');
    expect(demo).toContain('"url":"http://127.0.0.1:9999/hook"');
  });

  describe('with a port taken', () => {
    let held: Awaited<ReturnType<typeof holdPort>>;
    beforeAll(async () => void (held = await holdPort()));
    afterAll(() => held.release());

    it.each(['PORT', 'GATEWAY_HEALTH_PORT', 'SIM_PORT'])('npm run demo says so in one line naming %s, before building or migrating', async (variable) => {
      const env: Record<string, string> = {};
      for (const v of ['PORT', 'GATEWAY_HEALTH_PORT', 'DISPATCHER_HEALTH_PORT', 'SIM_PORT']) env[v] = String(v === variable ? held.port : await freePort());
      const { code, output } = await runToExit('scripts/start.js', ['--demo'], env);
      expect(code).toBe(1);
      expect(output).toBe(`port ${held.port} is already in use; run with another ${variable}, e.g. ${variable}=${held.port + 100} npm run demo\n`);
    });
  });
});
