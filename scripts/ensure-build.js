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

/** 'missing' (no build yet: a first start), 'stale' (a source is newer than the build) or null (up to date). */
function buildNeeded() {
  if (!existsSync(marker)) return 'missing';
  const sources = Math.max(newestSource(join(root, 'apps')), newestSource(join(root, 'libs')));
  return statSync(marker).mtimeMs < sources ? 'stale' : null;
}

/** Runs scripts/build.js with its output on our stderr; resolves to { status, seconds }. */
function build() {
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(__dirname, 'build.js')], { cwd: root, stdio: ['ignore', 2, 2] });
  return { status: r.status ?? 1, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

module.exports = { buildNeeded, build };

if (require.main === module) {
  const why = buildNeeded();
  if (why) {
    process.stderr.write(`building (dist/ is ${why === 'missing' ? 'missing' : 'older than the sources'})…\n`);
    const { status } = build();
    if (status !== 0) process.exit(status);
  }
}
