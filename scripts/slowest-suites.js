#!/usr/bin/env node
/*
 * Where the test time went: the slowest suites of a jest `--json` results file, longest first, with each project's
 * total. `.ci/run` prints it after `npm test`, so every CI log shows which suites to make leaner (docs/testing.md).
 *
 *   node scripts/slowest-suites.js [results.json (tmp/jest-results.json)] [how many (15)]
 *
 * Each suite's project comes from the file (scripts/test.js writes it) or is guessed from its titles
 * (scripts/jest-results.js).
 */
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');
const { suitesOf } = require('./jest-results');

const file = resolve(process.argv[2] ?? 'tmp/jest-results.json');
const count = Number(process.argv[3] ?? 15);
const results = JSON.parse(readFileSync(file, 'utf8'));
const suites = suitesOf(results);

const totals = new Map();
for (const s of suites) totals.set(s.project, (totals.get(s.project) ?? 0) + s.seconds);
const wall = (Math.max(...results.testResults.map((s) => s.endTime)) - results.startTime) / 1000;

console.log(`slowest ${Math.min(count, suites.length)} of ${suites.length} suites (wall ${wall.toFixed(0)} s; ${[...totals].map(([p, t]) => `${p} ${t.toFixed(0)} s`).join(', ')}):`);
for (const s of [...suites].sort((a, b) => b.seconds - a.seconds).slice(0, count)) {
  console.log(`${s.seconds.toFixed(1).padStart(8)} s  ${s.project.padEnd(11)} ${s.path}${s.status === 'passed' ? '' : `  (${s.status})`}`);
}
