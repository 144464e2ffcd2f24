import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { spawnRegistered } from './support/process-registry';
import { freePort, holdPort, runToExit, waitFor } from './support/processes';
import { loadRunContext, REPO_ROOT } from './support/run-context';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is plain Node, shared with `npm start`
const start = require('../scripts/start.js') as {
  demoIsolation(path: string): Record<'DATABASE_URL' | 'REDIS_KEY_PREFIX' | 'GATEWAY_ID', string>;
  bannerLines(input: {
    base: string;
    demo: boolean;
    apiKey: string | null;
    sim: string;
    org: string | null;
    login: { email: string; password: string };
    database?: string | null;
    hook?: string | null;
    engine?: 'sim' | 'baileys';
  }): string[];
  stopBoundMs(env: Record<string, string | undefined>): number;
};

/** The pids whose parent is `pid` (Linux: /proc via ps), to see that none is left after a stop. */
function childPids(pid: number): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)]).stdout.toString();
  return out.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

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
    const withKey = start.bannerLines({ base: 'http://127.0.0.1:3000', demo: false, apiKey: 'gwk_abc', sim: '', org: null, login }).join('\n');
    expect(withKey).toContain('/api/v1/sessions/<sessionId>/messages');
    expect(withKey).not.toContain('/sim/');
    const demo = start
      .bannerLines({
        base: 'http://127.0.0.1:3000',
        demo: true,
        apiKey: 'gwk_abc',
        sim: 'http://127.0.0.1:4010',
        org: 'org_1',
        login,
        database: 'gateway_demo_1 on 127.0.0.1:5432',
        hook: 'http://127.0.0.1:4011/hook',
      })
      .join('\n');
    expect(demo).toContain('export TOKEN=gwk_abc');
    expect(demo).toContain('/sim/sessions/<sessionId>/scan');
    expect(demo).toContain('database   gateway_demo_1 on 127.0.0.1:5432');
    // the webhook line points at the receiver the demo runs, never at a port nothing listens on
    expect(demo).toContain('"url":"http://127.0.0.1:4011/hook"');
    expect(demo).toContain('/api/v1/sessions/<sessionId>/messages');
    expect(demo).toMatch(/\/sim\/sessions\/<sessionId>\/inbound .*# a contact writes to you/);
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

/**
 * The demo as a newcomer runs it, against this run's database and Redis on free ports: it says what it does while it
 * starts, prints a banner whose lines work as printed, and Ctrl-C with a working session stops every process, the
 * simulator last, well before a drain would have ended.
 */
describe('npm run demo, started and stopped with Ctrl-C', () => {
  const ctx = loadRunContext();
  // the gateway's drain grace: a drain with no other gateway waits for most of it; a stop of the whole stack must not
  const DRAIN_GRACE_MS = 30000;
  let pids: number[] = [];

  afterAll(async () => {
    // the script itself is registered (its group is killed after a failure); its apps have groups of their own
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  /** `node scripts/start.js --demo [args]` on free ports, this run's database and Redis; resolves once its banner is out. */
  async function startDemo(tag: string, args: string[] = []) {
    const ports = { PORT: 0, API_OPS_PORT: 0, GATEWAY_HEALTH_PORT: 0, DISPATCHER_HEALTH_PORT: 0, SIM_PORT: 0, DEMO_WEBHOOK_PORT: 0 };
    for (const k of Object.keys(ports) as Array<keyof typeof ports>) ports[k] = await freePort();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      DATABASE_URL: ctx.databaseUrl,
      REDIS_URL: ctx.redisUrl,
      REDIS_KEY_PREFIX: `${ctx.redisPrefix}:demo-${tag}-${process.pid}`,
      GATEWAY_ID: `gw-demo-${tag}-${process.pid}`,
      NETWORK_SIM_URL: `http://127.0.0.1:${ports.SIM_PORT}`,
      GATEWAY_DRAIN_GRACE_MS: String(DRAIN_GRACE_MS),
      LOG_FORMAT: 'json',
      // as a user sees it: the test run's quiet level would hide a framework warning at start
      LOG_LEVEL: 'info',
    };
    const child = spawnRegistered(process.execPath, [join(REPO_ROOT, 'scripts/start.js'), '--demo', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }, 'demo');
    let output = '';
    child.stdout!.on('data', (d) => (output += d.toString()));
    child.stderr!.on('data', (d) => (output += d.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    // its apps, as soon as they exist, so that afterAll can kill what a failure leaves
    const collect = setInterval(() => (pids = [...new Set([...pids, ...childPids(child.pid!)])]), 200);
    // the banner's closing rule (the opening one comes before "demo ready")
    await waitFor(() => /demo ready[\s\S]*─{72}\n/.test(output), 120000, 'the banner')
      .catch((err: Error) => {
        throw new Error(`${err.message}; the script said:\n${output}`);
      })
      .finally(() => clearInterval(collect));
    const apps = childPids(child.pid!);
    pids = [...new Set([...pids, ...apps])];
    return { child, env, ports, exited, apps, output: () => output };
  }

  it('starts, pairs and talks as the banner says, and stops every process cleanly within the policy bound', async () => {
    const { child, env, ports, exited, apps, output: said } = await startDemo('ctrl-c');
    let output = said();
    // it said what it was doing before the banner
    for (const line of ['▸ migrating the database', '▸ seeding the demo organization', '▸ starting sim, api, gateway, dispatcher']) {
      expect(output).toContain(line);
    }
    // the build is up to date (the suite built it): no line about compiling, which a first start alone prints
    expect(output).not.toMatch(/compiling|built in/);
    expect(output).toContain(`database   ${new URL(ctx.databaseUrl).pathname.slice(1)} on 127.0.0.1:5432`);
    // Nest's legacy route warning (forRoutes('*')) is not among the start-up lines
    expect(output).not.toMatch(/Unsupported route path|LegacyRouteConverter/);

    // the banner's lines, used as printed
    const token = output.match(/export TOKEN=(\S+)/)![1];
    const base = `http://127.0.0.1:${ports.PORT}`;
    const auth = { Authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const hookUrl = output.match(/"url":"(http:\/\/127\.0\.0\.1:\d+\/hook)"/)![1];
    expect(hookUrl).toBe(`http://127.0.0.1:${ports.DEMO_WEBHOOK_PORT}/hook`);
    expect((await fetch(`${base}/api/v1/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: hookUrl, events: ['message.received'] }) })).status).toBe(201);
    const session = (await (await fetch(`${base}/api/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ label: 'demo phone' }) })).json()) as { id: string };
    await waitFor(async () => (await fetch(`${base}/api/v1/sessions/${session.id}/qr`, { headers: auth })).status === 200, 30000, 'the QR');
    const scan = await fetch(`${env.NETWORK_SIM_URL}/sim/sessions/${session.id}/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumber: '15551234567' }),
    });
    expect(scan.status).toBe(200);
    await waitFor(
      async () => ((await (await fetch(`${base}/api/v1/sessions/${session.id}`, { headers: auth })).json()) as { status: string }).status === 'working',
      30000,
      'the session working',
    );
    // "a contact writes to you": the demo's own receiver gets the event, once, with nothing to retry
    const inbound = await fetch(`${env.NETWORK_SIM_URL}/sim/sessions/${session.id}/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: '15550001111', text: 'hi there' }),
    });
    expect(inbound.status).toBe(200);
    await waitFor(() => /hook\s+\| message\.received ses_/.test(said()), 30000, "the demo receiver's line").catch((err: Error) => {
      throw new Error(`${err.message}; the script said:\n${said()}`);
    });

    // Ctrl-C with a working session
    expect(apps).toHaveLength(4);
    const stoppedAt = Date.now();
    child.kill('SIGINT');
    const { code } = await exited;
    const took = Date.now() - stoppedAt;
    output = said();
    expect(code).toBe(0);
    // every child stopped by itself, never killed: exit 0, or the api's SIGINT (Nest re-raises the signal once its
    // shutdown hooks are done); the simulator after all the others
    const exits = [...output.matchAll(/▸ (\w+) exited \((\w+)\)/g)].map((m) => [m[1], m[2]]);
    expect(exits.filter(([name, how]) => how !== '0' && !(name === 'api' && how === 'SIGINT'))).toEqual([]);
    expect(exits.map(([name]) => name).pop()).toBe('sim');
    expect(exits.map(([name]) => name).sort()).toEqual(['api', 'dispatcher', 'gateway', 'sim']);
    // the drain would have waited for another gateway until its grace (less 3 s) ran out; the stop does not wait at all
    expect(took).toBeLessThan(DRAIN_GRACE_MS - 3000);
    expect(apps.filter(alive)).toEqual([]);
  }, 240000);

  it('with --engine baileys runs the real engine against the simulator: the phone scans the API\'s QR as the banner says, a text is recorded by the network once', async () => {
    const { child, env, ports, exited, output: said } = await startDemo('baileys', ['--engine', 'baileys']);
    const output = said();
    expect(output).toContain('demo ready   (engine: baileys');
    const token = output.match(/export TOKEN=(\S+)/)![1];
    const base = `http://127.0.0.1:${ports.PORT}`;
    const auth = { Authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const session = (await (await fetch(`${base}/api/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ label: 'real engine' }) })).json()) as { id: string };
    const qr = await waitFor(async () => {
      const res = await fetch(`${base}/api/v1/sessions/${session.id}/qr`, { headers: auth });
      return res.status === 200 ? ((await res.json()) as { qr: string }).qr : null;
    }, 60000, 'the QR');
    // Baileys' QR: the network's ref, then the device's own keys (the sim engine shows the ref alone)
    const device = (await (await fetch(`${env.NETWORK_SIM_URL}/sim/sessions/${session.id}`)).json()) as { qr: string };
    expect(qr.startsWith(`${device.qr},`)).toBe(true);
    // the banner's scan line: the phone sends the QR it read
    expect(output).toContain(`${env.NETWORK_SIM_URL}/sim/sessions/<sessionId>/scan`);
    expect(output).toContain('\\"qr\\":\\"$QR\\"');
    const scan = await fetch(`${env.NETWORK_SIM_URL}/sim/sessions/${session.id}/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumber: '15551234568', qr }),
    });
    expect(scan.status).toBe(200);
    await waitFor(
      async () => ((await (await fetch(`${base}/api/v1/sessions/${session.id}`, { headers: auth })).json()) as { status: string }).status === 'working',
      60000,
      'the session working',
    );
    const sent = (await (
      await fetch(`${base}/api/v1/sessions/${session.id}/messages`, { method: 'POST', headers: auth, body: JSON.stringify({ to: '15550001111', type: 'text', text: 'hello over the real protocol' }) })
    ).json()) as { id: string };
    const waMessageId = await waitFor(async () => {
      const m = (await (await fetch(`${base}/api/v1/sessions/${session.id}/messages/${sent.id}`, { headers: auth })).json()) as { status: string; waMessageId: string };
      return m.status === 'sent' ? m.waMessageId : null;
    }, 30000, 'the text sent');
    // the contact decrypted it: the network recorded it once, as sent
    const recorded = ((await (await fetch(`${env.NETWORK_SIM_URL}/sim/messages?sessionId=${session.id}`)).json()) as { data: Array<{ id: string; text: string; sends: number }> }).data;
    expect(recorded.map((m) => [m.id, m.text, m.sends])).toEqual([[waMessageId, 'hello over the real protocol', 1]]);

    child.kill('SIGINT');
    expect((await exited).code).toBe(0);
  }, 240000);

  it('stops its apps by themselves when the script is killed outright (no Ctrl-C to order them)', async () => {
    const { child, exited, apps } = await startDemo('kill');
    expect(apps).toHaveLength(4);
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await exited;
    // each app sees the script's IPC channel close and stops as on Ctrl-C: no drain, so well within its wait
    await waitFor(() => apps.every((pid) => !alive(pid)), DRAIN_GRACE_MS - 3000, 'the apps stopping by themselves');
    expect(Date.now() - killedAt).toBeLessThan(DRAIN_GRACE_MS - 3000);
  }, 240000);
});
