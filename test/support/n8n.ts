import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AppProcess, freePort } from './processes';
import { execFileRegistered, spawnRegistered } from './process-registry';
import { REPO_ROOT } from './run-context';

/**
 * A real n8n for test/n8n.e2e-spec.ts (docs/integrations/n8n.md): installed once into a cache folder outside the
 * repository by scripts/n8n-nodes.js, started headless with this repository's community node package, and driven
 * over its REST API (owner setup, API key, credential test) and its public API (credentials, workflows, executions).
 */
export const NODE_PACKAGE_DIR = join(REPO_ROOT, 'packages', 'n8n-nodes-messaging-gateway');
const SCRIPT = join(REPO_ROOT, 'scripts', 'n8n-nodes.js');

export interface N8nInstall {
  dir: string;
  bin: string;
  /** installed by this run (else found in the cache) */
  installed: boolean;
  seconds: number;
  bytes: number;
}

/** Installs n8n into the cache when absent; a failure names the folder and npm's words, it never skips. */
export async function ensureN8n(): Promise<N8nInstall> {
  try {
    const { stdout } = await execFileRegistered(process.execPath, [SCRIPT, 'install-n8n'], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(stdout.trim().split('\n').pop()!) as N8nInstall;
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`n8n could not be installed for the n8n e2e (node scripts/n8n-nodes.js install-n8n): ${e.message}\n${(e.stderr ?? '').slice(-4000)}`, { cause: err });
  }
}

/** Compiles packages/n8n-nodes-messaging-gateway (installing its devDependencies the first time). */
export async function buildNodePackage(): Promise<void> {
  try {
    await execFileRegistered(process.execPath, [SCRIPT, 'build'], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`the n8n node package did not build: ${e.message}\n${e.stdout ?? ''}${(e.stderr ?? '').slice(-4000)}`, { cause: err });
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- n8n's answers are untyped JSON, asserted field by field
type Json = any;

export interface RunningN8n {
  url: string;
  proc: AppProcess;
  /** n8n's internal REST API as its owner (cookie) */
  rest(method: string, path: string, body?: object): Promise<{ status: number; body: Json }>;
  /** n8n's public API (`/api/v1`) with an API key of the owner */
  api(method: string, path: string, body?: object): Promise<{ status: number; body: Json }>;
}

/**
 * Starts `n8n start` on a free port with a temporary user folder (SQLite) in which the package is installed the way
 * `npm install` lays a community package out (`.n8n/nodes/node_modules/<name>` holding the package's `files`), sets up
 * the owner and an API key.
 */
export async function startN8n(install: N8nInstall): Promise<RunningN8n> {
  const userFolder = mkdtempSync(join(tmpdir(), 'gw-n8n-'));
  const pkg = JSON.parse(readFileSync(join(NODE_PACKAGE_DIR, 'package.json'), 'utf8')) as { name: string; files: string[] };
  const installed = join(userFolder, '.n8n', 'nodes', 'node_modules', pkg.name);
  mkdirSync(installed, { recursive: true });
  for (const entry of ['package.json', ...pkg.files]) cpSync(join(NODE_PACKAGE_DIR, entry), join(installed, entry), { recursive: true });

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: userFolder,
    N8N_USER_FOLDER: userFolder,
    N8N_PORT: String(port),
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_HOST: '127.0.0.1',
    N8N_PROTOCOL: 'http',
    WEBHOOK_URL: `${url}/`,
    N8N_EDITOR_BASE_URL: `${url}/`,
    N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
    N8N_SECURE_COOKIE: 'false',
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_TEMPLATES_ENABLED: 'false',
    N8N_PERSONALIZATION_ENABLED: 'false',
    N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
    N8N_PUBLIC_API_DISABLED: 'false',
    N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
    N8N_LOG_LEVEL: 'info',
    N8N_LOG_OUTPUT: 'console',
    DB_TYPE: 'sqlite',
    NODE_ENV: 'production',
  };
  const child = spawnRegistered(process.execPath, [install.bin, 'start'], { cwd: userFolder, env, stdio: ['ignore', 'pipe', 'pipe'] }, 'n8n');
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr!.on('data', (d) => (out = (out + d.toString()).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stopWith = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 15000)))]);
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(userFolder, { recursive: true, force: true });
  };
  const proc: AppProcess = { name: 'n8n', child, output: () => out, stop: () => stopWith('SIGTERM'), kill: () => stopWith('SIGKILL') };

  // n8n listens (and answers /healthz, and "n8n is starting up" to everything else) before its REST controllers are
  // mounted: ready once /rest/settings answers its JSON
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`n8n exited with ${child.exitCode}:\n${out.slice(-6000)}`);
    const ready = await fetch(`${url}/rest/settings`).then(
      async (r) => r.status === 200 && Boolean(((await r.json().catch(() => null)) as Json)?.data),
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`n8n did not become ready at ${url} within 180 s:\n${out.slice(-6000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  let cookie = '';
  const call = async (path: string, method: string, headers: Record<string, string>, body?: object) => {
    const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body ? JSON.stringify(body) : undefined });
    const text = await res.text();
    let json: Json = text;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: kept as text */
    }
    return { status: res.status, body: json, setCookie: res.headers.getSetCookie() };
  };
  const rest = async (method: string, path: string, body?: object) => {
    const res = await call(`/rest${path}`, method, cookie ? { cookie } : {}, body);
    const auth = res.setCookie.find((c) => c.startsWith('n8n-auth='));
    if (auth) cookie = auth.split(';')[0];
    return { status: res.status, body: res.body };
  };

  try {
    return await setUp(url, proc, rest, call);
  } catch (err) {
    // the folder and the process go with a failed setup too (the registry would only SIGKILL the process)
    await proc.kill();
    throw err;
  }
}

async function setUp(
  url: string,
  proc: AppProcess,
  rest: RunningN8n['rest'],
  call: (path: string, method: string, headers: Record<string, string>, body?: object) => Promise<{ status: number; body: Json }>,
): Promise<RunningN8n> {
  const owner = await rest('POST', '/owner/setup', { email: 'owner@n8n.test', firstName: 'Test', lastName: 'Owner', password: 'Owner-Passw0rd-1' });
  if (owner.status !== 200) throw new Error(`n8n owner setup answered ${owner.status}: ${JSON.stringify(owner.body)}`);
  const scopes = await rest('GET', '/api-keys/scopes');
  const key = await rest('POST', '/api-keys', { label: 'gateway-e2e', expiresAt: null, scopes: scopes.status === 200 ? scopes.body.data : undefined });
  if (key.status !== 200) throw new Error(`n8n API key creation answered ${key.status}: ${JSON.stringify(key.body)}`);
  const apiKey: string | undefined = (key.body?.data ?? key.body)?.rawApiKey;
  if (!apiKey) throw new Error(`n8n API key creation answered no key: ${JSON.stringify(key.body)}`);
  const api = async (method: string, path: string, body?: object) => {
    const res = await call(`/api/v1${path}`, method, { 'X-N8N-API-KEY': apiKey }, body);
    return { status: res.status, body: res.body };
  };
  return { url, proc, rest, api };
}
