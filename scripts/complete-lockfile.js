#!/usr/bin/env node
/*
 * Keeps `npm ci` working when the registry this lockfile was made against lacks some platform binaries.
 * npm leaves an optional platform package (a darwin/win32/arm build of a native helper) out of package-lock.json
 * when it cannot resolve its exact version, and `npm ci` then refuses the lockfile as out of sync. This adds each
 * missing one as an optional entry with its os/cpu (read from the registry's nearest version), which `npm ci` skips
 * on every other platform without downloading anything. Run it after `npm install` changes the lockfile.
 */
const { execFileSync } = require('node:child_process');
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const file = join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
let added = 0;

for (const [path, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${name}`;
    const top = `node_modules/${name}`;
    if (packages[nested] || packages[top]) continue;
    const meta = JSON.parse(execFileSync('npm', ['view', name, 'os', 'cpu', 'libc', 'license', '--json'], { encoding: 'utf8' }) || '{}');
    const stub = { version: range.replace(/^[\^~=]/, ''), optional: true };
    for (const key of ['license', 'cpu', 'os', 'libc']) if (meta[key]) stub[key] = meta[key];
    if (!stub.os && !stub.cpu) throw new Error(`${name}: the registry names no os/cpu; cannot mark it platform-only`);
    packages[top] = stub;
    added++;
    process.stderr.write(`added ${top}@${stub.version} (${[stub.os, stub.cpu].flat().join(' ')})\n`);
  }
}

lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stderr.write(`${added} optional platform entries added\n`);
