#!/usr/bin/env node
/*
 * Refreshes test/support/suite-times.json, the table the e2e shards are dealt by (test/support/e2e-sequencer.js), from
 * a jest `--json` results file: each e2e suite that passed gets the seconds it took, per project. A suite the file did
 * not run or that failed (its time says little) keeps its old value; a file that no longer exists is dropped.
 *
 *   node scripts/suite-times.js [results.json (tmp/jest-results.json)]
 *
 * Run it on a whole `npm test`'s results (what .ci/run leaves in tmp/jest-results.json) and commit the table when the
 * suites changed enough to unbalance the shards (scripts/test.js prints each shard's time).
 */
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative, resolve } = require('node:path');
const { suitesOf } = require('./jest-results');
const { TIMES_FILE } = require('../test/support/e2e-sequencer');

const root = resolve(__dirname, '..');
const file = resolve(process.argv[2] ?? 'tmp/jest-results.json');
const suites = suitesOf(JSON.parse(readFileSync(file, 'utf8'))).filter((s) => s.project !== 'unit');
const old = existsSync(TIMES_FILE) ? JSON.parse(readFileSync(TIMES_FILE, 'utf8')) : {};

const times = {};
for (const [project, entries] of Object.entries(old)) {
  for (const [path, seconds] of Object.entries(entries)) if (existsSync(join(root, path))) (times[project] ??= {})[path] = seconds;
}
let updated = 0;
for (const s of suites) {
  if (s.status !== 'passed') continue;
  (times[s.project] ??= {})[s.path] = Math.round(s.seconds * 10) / 10;
  updated++;
}

// stable order (projects, then paths), so a refresh's diff shows only what moved
const sorted = Object.fromEntries(
  Object.keys(times)
    .sort()
    .map((project) => [project, Object.fromEntries(Object.entries(times[project]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))]),
);
writeFileSync(TIMES_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
const totals = Object.entries(sorted).map(([project, entries]) => `${project} ${Object.keys(entries).length} files ${Math.round(Object.values(entries).reduce((a, b) => a + b, 0))} s`);
const skipped = suites.length - updated;
console.log(`${relative(root, TIMES_FILE)}: ${updated} suites measured${skipped ? `, ${skipped} not passed (old value kept)` : ''}; ${totals.join(', ')}`);
