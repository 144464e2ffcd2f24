#!/usr/bin/env node
/*
 * `npm start`: check the ports, build if needed, create + migrate the database, create the BOOTSTRAP_* organization
 * if asked, then run api + one gateway + webhook-dispatcher together with prefixed logs, and end with a banner (where
 * it listens, what to run next). Ctrl-C (or SIGTERM) stops them all cleanly; if one dies, the others are stopped.
 * `npm run demo` (--demo): the same with the network simulator engine, plus the simulator itself and a seeded demo
 * organization, printing an API key and example curl lines that work as printed. `npm run demo -- --engine baileys`:
 * the gateway runs the real engine (Baileys) against the simulator's WhatsApp Web front door (WHATSAPP_EMULATOR_URL),
 * offline; the phone scans the QR the API (and the dashboard) shows, through the simulator's control API.
 */
const { spawn, spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { createServer: createHttpServer } = require('node:http');
const { createServer } = require('node:net');
const { join } = require('node:path');
const { createInterface } = require('node:readline');
const { build, buildNeeded } = require('./ensure-build');
const { ensureLocalServices, LocalServiceError } = require('./local-services');

const root = join(__dirname, '..');

/** A step (build, migrate, bootstrap) failed; it has said why on stderr. */
class StepFailed extends Error {
  constructor(code) {
    super(`step exited with ${code}`);
    this.code = code;
  }
}

/** Stops the PostgreSQL and Redis this run started (none until main has looked). */
let stopServices = async () => undefined;
/** Removes this run's record of its stores (tmp/running-stack.json), once it was written. */
let forgetStack = () => undefined;

/**
 * Two checkouts' demos must not share a database, a Redis namespace or a gateway id (one demo's gateway would take
 * the other's sessions): all three are derived from the checkout's path, stable across runs of the same clone.
 */
function demoIsolation(checkoutPath, pgBase = 'postgres://postgres@127.0.0.1:5432') {
  const tag = createHash('sha256').update(checkoutPath).digest('hex').slice(0, 8);
  return {
    DATABASE_URL: `${pgBase}/gateway_demo_${tag}`,
    REDIS_KEY_PREFIX: `gwdemo-${tag}`,
    GATEWAY_ID: `demo-${tag}`,
  };
}

/** The ports this run will listen on, with the variable that moves each (the apps' own defaults). */
function plannedPorts(env, demo) {
  const ports = [
    ['PORT', env.PORT || '3000'],
    ['API_OPS_PORT', env.API_OPS_PORT || '3003'],
    ['GATEWAY_HEALTH_PORT', env.GATEWAY_HEALTH_PORT || '3001'],
    ['DISPATCHER_HEALTH_PORT', env.DISPATCHER_HEALTH_PORT || '3002'],
  ];
  if (demo) ports.push(['SIM_PORT', env.SIM_PORT || '4010'], ['DEMO_WEBHOOK_PORT', env.DEMO_WEBHOOK_PORT || '4011']);
  return ports.map(([variable, port]) => ({ variable, port: Number(port) }));
}

function portFree(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve(true)));
  });
}

/** One line for the first taken port, or null when all are free. */
async function takenPortLine(ports, command) {
  for (const { variable, port } of ports) {
    if (!(await portFree(port))) return `port ${port} is already in use; run with another ${variable}, e.g. ${variable}=${port + 100} ${command}`;
  }
  return null;
}

/** The database a run uses, as the banner names it: host, port and name, never a password. */
function databaseLabel(url) {
  try {
    const u = new URL(url);
    return `${u.pathname.replace(/^\//, '')} on ${u.hostname}:${u.port || 5432}`;
  } catch {
    return '(DATABASE_URL is not a URL)';
  }
}

/**
 * The engine `--engine <sim|baileys>` (or `--engine=…`) asks for, `sim` when none; only the demo takes one (the
 * simulator is the WhatsApp it talks to). Returns { engine } or { error } (one line).
 */
function engineOption(argv, demo) {
  const i = argv.findIndex((a) => a === '--engine' || a.startsWith('--engine='));
  if (i < 0) return { engine: 'sim' };
  const engine = argv[i].includes('=') ? argv[i].slice('--engine='.length) : argv[i + 1];
  if (!demo) return { error: '--engine is for the demo only: npm run demo -- --engine baileys (npm start takes GATEWAY_ENGINE)' };
  if (engine !== 'sim' && engine !== 'baileys') return { error: `--engine must be sim or baileys, not ${engine ?? '(nothing)'}` };
  return { engine };
}

function bannerLines({ base, demo, apiKey, sim, org, login, database = null, hook = null, engine = 'sim' }) {
  const line = '─'.repeat(72);
  const out = [
    '',
    `${line}`,
    `  ${demo ? 'demo' : 'gateway'} ready${demo && engine === 'baileys' ? '   (engine: baileys, the real WhatsApp Web protocol against the simulator)' : ''}`,
    `  API        ${base}/api/v1`,
    `  docs       ${base}/api/docs`,
    `  dashboard  ${base}/dashboard/`,
  ];
  if (database) out.push(`  database   ${database}`);
  if (demo && hook) out.push(`  webhooks   ${hook}   (a receiver this demo runs; what it gets is logged as \`hook |\`)`);
  if (demo) out.push(`  login      ${login.email} / ${login.password}   (organization ${org})`);
  out.push('');
  if (apiKey) {
    out.push(`  API key (shown once): ${apiKey}`, '', '  next:', `    export TOKEN=${apiKey}`);
    out.push(`    curl -s -X POST ${base}/api/v1/sessions -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"label":"my phone"}'`);
    out.push(`    curl -s ${base}/api/v1/sessions/<sessionId>/qr -H "Authorization: Bearer $TOKEN"`);
    if (demo && engine === 'baileys') {
      // the phone needs the QR the screen shows (it carries Baileys' keys and the adv secret): the API's, as on the dashboard
      out.push(
        `    QR=$(curl -s ${base}/api/v1/sessions/<sessionId>/qr -H "Authorization: Bearer $TOKEN" | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).qr')`,
        `    curl -s -X POST ${sim}/sim/sessions/<sessionId>/scan -H 'content-type: application/json' -d "{\\"phoneNumber\\":\\"15551234567\\",\\"qr\\":\\"$QR\\"}"   # the phone scans the QR`,
      );
    } else if (demo) {
      out.push(`    curl -s -X POST ${sim}/sim/sessions/<sessionId>/scan -H 'content-type: application/json' -d '{"phoneNumber":"15551234567"}'   # the phone scans`);
    }
    out.push(`    curl -s ${base}/api/v1/sessions/<sessionId> -H "Authorization: Bearer $TOKEN"   # working, once the phone scanned`);
    out.push(
      `    curl -s -X POST ${base}/api/v1/sessions/<sessionId>/messages -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"to":"15550001111","type":"text","text":"hello"}'   # you send`,
    );
    if (demo) {
      out.push(
        `    curl -s -X POST ${sim}/sim/sessions/<sessionId>/inbound -H 'content-type: application/json' -d '{"from":"15550001111","text":"hi there"}'   # a contact writes to you`,
      );
      out.push(
        `    curl -s -X POST ${base}/api/v1/sessions/<sessionId>/groups -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"Team","participants":["15550001111@s.whatsapp.net"]}'`,
      );
      // the demo allows private webhook targets (WEBHOOK_ALLOW_PRIVATE_TARGETS=true), so its own receiver is accepted;
      // a target that answers means no retries filling the log
      out.push(
        `    curl -s -X POST ${base}/api/v1/webhooks -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"url":"${hook}","secret":"s3cret"}'`,
      );
    } else {
      out.push(
        `    curl -s -X POST ${base}/api/v1/webhooks -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"url":"https://example.com/hook","secret":"s3cret"}'`,
        '    # a receiver on this machine or your LAN needs WEBHOOK_ALLOW_PRIVATE_TARGETS=true (see docs/configuration.md)',
      );
    }
  } else {
    out.push(
      '  next: an organization and a first API key (or set BOOTSTRAP_ORG_NAME, BOOTSTRAP_OWNER_EMAIL, BOOTSTRAP_OWNER_PASSWORD):',
      "    npm run -s cli -- org:create --name Acme --owner-email you@example.com --owner-password 'choose-a-password' --with-key",
      `    curl -s ${base}/api/v1/sessions -H "Authorization: Bearer <apiKey.token from above>"`,
    );
  }
  out.push(`${line}`, '');
  return out;
}

async function main() {
  const demo = process.argv.includes('--demo');
  const node = process.execPath;
  const env = { ...process.env };
  const command = demo ? 'npm run demo' : 'npm start';
  const { engine, error } = engineOption(process.argv.slice(2), demo);
  if (error) {
    process.stderr.write(`${error}\n`);
    process.exit(1);
  }

  // before anything else (a build, a migration): a taken port is one line, not a stack from the third child
  const taken = await takenPortLine(plannedPorts(env, demo), command);
  if (taken) {
    process.stderr.write(`${taken}\n`);
    process.exit(1);
  }

  // a fresh machine: a PostgreSQL and a Redis of our own when none answers and none is configured
  // (scripts/local-services.js); they stop after the apps
  let services;
  try {
    services = await ensureLocalServices(env, { log: (line) => process.stdout.write(`${line}\n`) });
  } catch (err) {
    if (!(err instanceof LocalServiceError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  stopServices = services.stop;
  if (services.pgBase && !demo) env.DATABASE_URL = `${services.pgBase}/gateway`;
  if (services.redisUrl) env.REDIS_URL = services.redisUrl;

  if (demo) {
    env.GATEWAY_ENGINE = engine;
    // the demo's own webhook curl line targets 127.0.0.1: private targets must be allowed, whatever the shell says
    env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
    for (const [k, v] of Object.entries(demoIsolation(root, services.pgBase ?? undefined))) env[k] = env[k] ?? v;
    env.NETWORK_SIM_URL = env.NETWORK_SIM_URL ?? `http://127.0.0.1:${env.SIM_PORT ?? 4010}`;
    // the real engine dials the simulator's WhatsApp Web front door instead of web.whatsapp.com (docs/baileys-engine.md)
    if (engine === 'baileys') env.WHATSAPP_EMULATOR_URL = env.NETWORK_SIM_URL;
  }
  // short human lines in a terminal; the children write to our pipes, so they are told
  if (process.stdout.isTTY && !env.LOG_FORMAT) env.LOG_FORMAT = 'pretty';

  const step = (args, extraEnv = {}) => {
    const r = spawnSync(node, args, { cwd: root, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new StepFailed(r.status ?? 1);
    return r.stdout.toString();
  };

  // a build is the one long step (the apps, the CLI and the dashboard: 47 s on an idle 2-core machine, minutes on a
  // busy one): said when it happens, which is the first start and after a source changed, with what it really took
  const why = buildNeeded();
  if (why) {
    say(`${why === 'missing' ? 'first start: compiling' : 'sources changed: recompiling'} every app and the dashboard (about a minute on an idle 2-core machine)…`);
    const { status, seconds } = build();
    if (status !== 0) throw new StepFailed(status);
    say(`built in ${seconds.toFixed(0)} s`);
  }
  const cli = join(root, 'dist/apps/cli/src/main.js');
  // the CLI run beside this stack without a DATABASE_URL finds its stores here (the embedded server's password, the
  // demo's own database); the CLI's module owns the file
  const stackFile = require(join(root, 'dist/apps/cli/src/running-stack.js'));
  const { DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX } = env;
  stackFile.recordRunningStack({ pid: process.pid, demo, env: { DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX } }, stackFile.stackStateFile(env));
  forgetStack = () => stackFile.forgetRunningStack(process.pid, stackFile.stackStateFile(env));
  const database = databaseLabel(env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/gateway');
  say(`migrating the database ${database}…`);
  step([cli, 'migrate']);

  const login = { email: 'demo@example.test', password: 'demo-password' };
  say(demo ? 'seeding the demo organization and a fresh API key…' : 'bootstrapping (BOOTSTRAP_* organization, if set)…');
  const seed = demo
    ? seedDemo(step, cli, login)
    : { apiKey: JSON.parse(step([cli, 'bootstrap'])).apiKey?.token ?? null, org: null };

  const apps = [
    ['api', 'dist/apps/api/src/main.js'],
    ['gateway', 'dist/apps/gateway/src/main.js'],
    ['dispatcher', 'dist/apps/webhook-dispatcher/src/main.js'],
  ];
  if (demo) apps.unshift(['sim', 'dist/apps/network-sim/src/main.js']);

  const colours = [36, 35, 33, 32, 34];
  const width = Math.max(...apps.map(([n]) => n.length));
  const children = new Map();
  let stopping = false;

  const prefix = (name, i) => {
    const tag = process.stdout.isTTY ? `\x1b[${colours[i % colours.length]}m${name.padEnd(width)} |\x1b[0m ` : `${name.padEnd(width)} | `;
    return (stream, out) => createInterface({ input: stream }).on('line', (line) => out.write(tag + line + '\n'));
  };

  // the demo's webhook target: a receiver that answers 200 and logs one line per event, so a webhook created from
  // the banner's curl line is delivered at once instead of retrying against nothing
  const hook = demo ? await startDemoReceiver(Number(env.DEMO_WEBHOOK_PORT || 4011), prefix('hook', apps.length)) : null;

  /**
   * Ctrl-C stops the stack in order: the api, gateway and dispatcher first, told with SIGINT that the whole stack is
   * stopping (the gateway then closes its sessions at once instead of draining them to a gateway that will never
   * come), and the simulator last, once nothing talks to it. Each phase is bounded by the slowest child's own forced
   * exit (the gateway's is its drain grace + 5 s), after which what is left is killed.
   */
  const stopAll = async (code) => {
    if (stopping) return;
    stopping = true;
    const started = Date.now();
    const phases = [[...children.keys()].filter((n) => n !== 'sim'), ['sim']];
    for (const names of phases) {
      const left = names.map((n) => children.get(n)).filter(Boolean);
      await Promise.all(left.map((child) => stopChild(child, 'SIGINT', stopBoundMs(env))));
    }
    await new Promise((resolve) => (hook ? hook.close(resolve) : resolve()));
    // the PostgreSQL / Redis this script started, if any, go after everything that used them
    await stopServices();
    forgetStack();
    say(`stopped in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    process.exit(code);
  };

  apps.forEach(([name, entry], i) => {
    // each child in its own process group: a Ctrl-C reaches this script only, which stops them in order; the IPC
    // channel and scripts/exit-with-parent.js stop them should this script die any other way
    const child = spawn(node, ['--require', join(__dirname, 'exit-with-parent.js'), join(root, entry)], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
    });
    const pipe = prefix(name, i);
    pipe(child.stdout, process.stdout);
    pipe(child.stderr, process.stderr);
    children.set(name, child);
    child.on('exit', (code, signal) => {
      children.delete(name);
      if (stopping) say(`${name} exited (${signal ?? code})`);
      else {
        process.stderr.write(`${name} exited (${signal ?? code}); stopping the others\n`);
        stopAll(code || 1);
      }
    });
  });

  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));
  // a closed terminal: its hang-up reaches this script only (the children have their own process groups)
  process.on('SIGHUP', () => stopAll(0));
  say(`starting ${apps.map(([n]) => n).join(', ')}; waiting until each is ready…`);

  const base = `http://127.0.0.1:${env.PORT ?? 3000}`;
  const ready = [
    `${base}/readyz`,
    `http://127.0.0.1:${env.GATEWAY_HEALTH_PORT ?? 3001}/readyz`,
    `http://127.0.0.1:${env.DISPATCHER_HEALTH_PORT ?? 3002}/readyz`,
  ];
  if (!(await allReady(ready, () => stopping))) return;
  process.stdout.write(bannerLines({ base, demo, apiKey: seed.apiKey, sim: env.NETWORK_SIM_URL, org: seed.org, login, database, hook: hook?.url ?? null, engine }).join('\n'));
}

/** A progress line of this script (not of a child), so the first start is never silent. */
function say(line) {
  process.stdout.write(`${process.stdout.isTTY ? '\x1b[2m' : ''}▸ ${line}${process.stdout.isTTY ? '\x1b[0m' : ''}\n`);
}

/**
 * How long one stop phase may take before what is left is killed: the slowest child's own forced exit, which is the
 * gateway's (GATEWAY_DRAIN_GRACE_MS + 5 s, apps/gateway/src/main.ts), plus a second for the exit itself.
 */
function stopBoundMs(env) {
  return Number(env.GATEWAY_DRAIN_GRACE_MS || 30000) + 6000;
}

/** Signals one child and resolves when it has exited, killing it after `boundMs`. */
function stopChild(child, signal, boundMs) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const hard = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill(signal);
  });
}

/** The demo's webhook receiver on 127.0.0.1:`port`: 200 to every POST, one log line per event. */
function startDemoReceiver(port, pipe) {
  const { PassThrough } = require('node:stream');
  const log = new PassThrough();
  pipe(log, process.stdout);
  const server = createHttpServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let what = `${req.method} ${req.url}`;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        what = `${body.event ?? body.type ?? '?'}${body.sessionId ? ` ${body.sessionId}` : ''} (${req.headers['x-webhook-request-id'] ?? 'no request id'})`;
      } catch {
        /* not JSON: the method and path say enough */
      }
      log.write(`${what}\n`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      // the dispatcher keeps its connection alive: close it too, or the server would wait for it
      resolve({ url: `http://127.0.0.1:${port}/hook`, close: (done) => (server.close(() => done()), server.closeAllConnections()) });
    });
  });
}

/** The demo organization: created on the first run (with a key); later runs of this clone add a fresh key to it. */
function seedDemo(step, cli, login) {
  const boot = JSON.parse(
    step([cli, 'bootstrap'], { BOOTSTRAP_ORG_NAME: 'Demo', BOOTSTRAP_OWNER_EMAIL: login.email, BOOTSTRAP_OWNER_PASSWORD: login.password }),
  );
  if (boot.bootstrapped) return { apiKey: boot.apiKey.token, org: boot.organization.id };
  const org = JSON.parse(step([cli, 'org:list'])).organizations.find((o) => o.name === 'Demo');
  const key = JSON.parse(step([cli, 'apikey:create', '--org', org.id, '--name', `demo-${Date.now()}`, '--permissions', '*']));
  return { apiKey: key.token, org: org.id };
}

async function allReady(urls, gaveUp) {
  for (let i = 0; i < 200 && !gaveUp(); i++) {
    const answers = await Promise.all(urls.map((u) => fetch(u).then((r) => r.ok, () => false)));
    if (answers.every(Boolean)) return true;
    await new Promise((r) => setTimeout(r, 300));
  }
  return false;
}

module.exports = { demoIsolation, plannedPorts, takenPortLine, bannerLines, databaseLabel, stopBoundMs, engineOption };

if (require.main === module) {
  main().catch(async (err) => {
    if (!(err instanceof StepFailed)) process.stderr.write(`start failed: ${err instanceof Error ? err.message : String(err)}\n`);
    await stopServices();
    forgetStack();
    process.exit(err instanceof StepFailed ? err.code : 1);
  });
}
