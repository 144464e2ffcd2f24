#!/usr/bin/env node
// Builds when dist/ is missing or older than any source file, so `npm start` and the CLI just work.
const { existsSync, statSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');
const root = join(__dirname, '..');
const marker = join(root, 'dist', 'apps', 'api', 'src', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

const built = existsSync(marker) ? statSync(marker).mtimeMs : 0;
const sources = Math.max(newestSource(join(root, 'apps')), newestSource(join(root, 'libs')));
if (built < sources) {
  process.stderr.write('building (dist/ is missing or older than the sources)…\n');
  const r = spawnSync(process.execPath, [join(__dirname, 'build.js')], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
