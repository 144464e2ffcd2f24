#!/usr/bin/env node
/*
 * `npm start`: build if needed, create + migrate the database, then run api + one gateway + webhook-dispatcher
 * together with prefixed logs. Ctrl-C (or SIGTERM) stops them all cleanly; if one dies, the others are stopped.
 * `npm run demo` (--demo): the same with the network simulator engine, plus the simulator itself and a seeded demo
 * organization, printing an API key and example curl lines.
 */
const { spawn, spawnSync } = require('node:child_process');
const { join } = require('node:path');
const { createInterface } = require('node:readline');

const root = join(__dirname, '..');
const demo = process.argv.includes('--demo');
const node = process.execPath;
const env = { ...process.env };

if (demo) {
  env.GATEWAY_ENGINE = 'sim';
  env.WEBHOOK_ALLOW_PRIVATE_TARGETS = env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? 'true';
  env.DATABASE_URL = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/gateway_demo';
  env.REDIS_KEY_PREFIX = env.REDIS_KEY_PREFIX ?? 'gwdemo';
  env.NETWORK_SIM_URL = env.NETWORK_SIM_URL ?? `http://127.0.0.1:${env.SIM_PORT ?? 4010}`;
}

function step(args) {
  const r = spawnSync(node, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) process.exit(r.status ?? 1);
  return r.stdout.toString();
}

step([join(__dirname, 'ensure-build.js')]);
const cli = join(root, 'dist/apps/cli/src/main.js');
step([cli, 'migrate']);

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

function prefix(name, i) {
  const tag = `\x1b[${colours[i % colours.length]}m${name.padEnd(width)} |\x1b[0m `;
  return (stream, out) => createInterface({ input: stream }).on('line', (line) => out.write(tag + line + '\n'));
}

function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill('SIGTERM');
  const hard = setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
  }, 15000);
  hard.unref();
  const done = () => {
    if (children.size === 0) process.exit(code);
  };
  for (const child of children.values()) child.once('exit', done);
  done();
}

apps.forEach(([name, entry], i) => {
  const child = spawn(node, [join(root, entry)], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pipe = prefix(name, i);
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  children.set(name, child);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      process.stderr.write(`${name} exited (${signal ?? code}); stopping the others\n`);
      stopAll(code || 1);
    }
  });
});

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

if (demo) seedDemo().catch((err) => process.stderr.write(`demo seed failed: ${err.message}\n`));

async function seedDemo() {
  const port = env.PORT ?? 3000;
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 300));
  }
  const email = 'demo@example.test';
  const password = 'demo-password';
  let org;
  const created = spawnSync(node, [cli, 'org:create', '--name', 'Demo', '--owner-email', email, '--owner-password', password], { cwd: root, env });
  if (created.status === 0) org = JSON.parse(created.stdout.toString()).organization.id;
  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  }).then((r) => r.json());
  if (!org) org = (await fetch(`${base}/api/v1/auth/me`, { headers: { authorization: `Bearer ${login.accessToken}` } }).then((r) => r.json())).organizationId;
  const key = JSON.parse(step([cli, 'apikey:create', '--org', org, '--name', `demo-${Date.now()}`, '--permissions', '*']));
  const sim = env.NETWORK_SIM_URL;
  process.stdout.write(`
──────────────────────────── demo ready ────────────────────────────
organization ${org}   login ${email} / ${password}
API key (shown once):  ${key.token}

export TOKEN=${key.token}
curl -s -X POST ${base}/api/v1/sessions -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"label":"my phone"}'
curl -s ${base}/api/v1/sessions/<sessionId>/qr -H "Authorization: Bearer $TOKEN"
curl -s -X POST ${sim}/sim/sessions/<sessionId>/scan -H 'content-type: application/json' -d '{"phoneNumber":"15551234567"}'   # the phone scans
curl -s ${base}/api/v1/sessions/<sessionId> -H "Authorization: Bearer $TOKEN"
curl -s -X POST ${base}/api/v1/sessions/<sessionId>/groups -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"Team","participants":["15550001111@s.whatsapp.net"]}'
curl -s -X POST ${base}/api/v1/webhooks -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:9999/hook","secret":"s3cret"}'
open ${base}/api/docs for the whole API
────────────────────────────────────────────────────────────────────
`);
}
