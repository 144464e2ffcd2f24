#!/usr/bin/env node
/*
 * The n8n community node package (packages/n8n-nodes-messaging-gateway, docs/integrations/n8n.md) and the n8n its
 * test runs in. Neither is part of the root install: n8n-workflow's types and n8n itself stay out of the root
 * package's dependencies.
 *
 *   node scripts/n8n-nodes.js build         installs the package's devDependencies when missing (npm ci in its folder),
 *                                           then compiles it to packages/n8n-nodes-messaging-gateway/dist
 *   node scripts/n8n-nodes.js install-n8n   installs n8n@N8N_VERSION into the cache folder when absent and prints
 *                                           {"dir", "bin", "installed", "seconds", "bytes"} as JSON
 *
 * The cache folder is outside the repository: ${N8N_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/messaging-gateway}/n8n-<version>.
 * Both steps hold a lock (a directory made atomically, with the holder's pid), so concurrent test runs wait for one
 * install instead of colliding; a lock whose holder died is taken over. An install counts only once its marker file
 * is written, so an interrupted one is redone.
 */
const { spawnSync } = require('node:child_process');
const { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { homedir } = require('node:os');
const { join } = require('node:path');

/** The n8n the package is tested against; its n8n-workflow is the package's devDependency (2.8.0). */
const N8N_VERSION = '2.8.4';
/**
 * n8n-nodes-base takes xlsx from cdn.sheetjs.com, not from the npm registry; where only the registry is reachable (CI)
 * that fails the whole install. The registry's last xlsx serves the Spreadsheet File node, which the test does not use.
 */
const OVERRIDES = { xlsx: '0.18.5' };
const root = join(__dirname, '..');
const packageDir = join(root, 'packages', 'n8n-nodes-messaging-gateway');
const cacheRoot = process.env.N8N_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'messaging-gateway');
const n8nDir = join(cacheRoot, `n8n-${N8N_VERSION}`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Runs `fn` holding the lock `<path>.lock`; waits (polling) while a live process holds it. */
function withLock(path, fn) {
  const lock = `${path}.lock`;
  mkdirSync(join(lock, '..'), { recursive: true });
  let said = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let holder = NaN;
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        /* being created or removed */
      }
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!said) process.stderr.write(`n8n-nodes: waiting for ${lock} (held by pid ${holder})\n`);
      said = true;
      spawnSync('sleep', ['1']);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function run(command, args, cwd) {
  const res = spawnSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (res.status !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${res.status ?? res.signal}`);
}

/** Bytes under `dir`, links not followed. */
function sizeOf(dir) {
  let total = 0;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop();
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) stack.push(p);
      else total += st.size;
    }
  }
  return total;
}

function build() {
  withLock(join(packageDir, 'node_modules'), () => {
    if (!existsSync(join(packageDir, 'node_modules', 'n8n-workflow', 'package.json'))) {
      run(npm, ['ci', '--no-audit', '--no-fund'], packageDir);
    }
    run(process.execPath, [join(packageDir, 'build.js')], packageDir);
  });
}

function installN8n() {
  const marker = join(n8nDir, '.installed');
  const bin = join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n');
  return withLock(n8nDir, () => {
    if (existsSync(marker)) return { dir: n8nDir, bin, installed: false, ...JSON.parse(readFileSync(marker, 'utf8')) };
    const started = Date.now();
    rmSync(n8nDir, { recursive: true, force: true });
    mkdirSync(n8nDir, { recursive: true });
    writeFileSync(join(n8nDir, 'package.json'), JSON.stringify({ name: 'n8n-for-tests', private: true, overrides: OVERRIDES }) + '\n');
    process.stderr.write(`n8n-nodes: installing n8n@${N8N_VERSION} into ${n8nDir} (a few hundred MB; minutes)\n`);
    run(npm, ['install', `n8n@${N8N_VERSION}`, '--no-audit', '--no-fund', '--omit=dev', '--loglevel=error'], n8nDir);
    if (!existsSync(bin)) throw new Error(`npm installed n8n@${N8N_VERSION} but ${bin} is missing`);
    const figures = { seconds: Math.round((Date.now() - started) / 1000), bytes: sizeOf(n8nDir) };
    writeFileSync(marker, JSON.stringify(figures) + '\n');
    return { dir: n8nDir, bin, installed: true, ...figures };
  });
}

const command = process.argv[2];
try {
  if (command === 'build') build();
  else if (command === 'install-n8n') process.stdout.write(JSON.stringify(installN8n()) + '\n');
  else {
    process.stderr.write('usage: node scripts/n8n-nodes.js build | install-n8n\n');
    process.exit(2);
  }
} catch (err) {
  process.stderr.write(`n8n-nodes: ${err.message}\n`);
  process.exit(1);
}
