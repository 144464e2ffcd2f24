#!/usr/bin/env node
/*
 * Where the test time went: the slowest suites of a jest `--json` results file, longest first, with each project's
 * total. `.ci/run` prints it after `npm test`, so every CI log shows which suites to make leaner (docs/testing.md).
 *
 *   node scripts/slowest-suites.js [results.json (tmp/jest-results.json)] [how many (15)]
 *
 * Jest's JSON names a suite by its path only; a file of the engine matrix runs twice (projects e2e and e2e-baileys),
 * and its titles name the engine, which tells the two apart.
 */
const { readFileSync } = require('node:fs');
const { relative, resolve } = require('node:path');

const file = resolve(process.argv[2] ?? 'tmp/jest-results.json');
const count = Number(process.argv[3] ?? 15);
const results = JSON.parse(readFileSync(file, 'utf8'));
const root = resolve(__dirname, '..');

const projectOf = (suite) => {
  const path = relative(root, suite.name);
  if (!path.startsWith('test/')) return 'unit';
  const titles = suite.assertionResults.flatMap((a) => a.ancestorTitles).join(' ');
  return /\bbaileys engine\b/.test(titles) || (!/\bsim engine\b/.test(titles) && suite.pass === 2) ? 'e2e-baileys' : 'e2e';
};

const seen = new Map();
const suites = results.testResults.map((suite) => {
  seen.set(suite.name, (seen.get(suite.name) ?? 0) + 1);
  const entry = { ...suite, pass: seen.get(suite.name) };
  return { path: relative(root, suite.name), project: projectOf(entry), seconds: (suite.endTime - suite.startTime) / 1000, status: suite.status };
});

const totals = new Map();
for (const s of suites) totals.set(s.project, (totals.get(s.project) ?? 0) + s.seconds);
const wall = (Math.max(...results.testResults.map((s) => s.endTime)) - results.startTime) / 1000;

console.log(`slowest ${Math.min(count, suites.length)} of ${suites.length} suites (wall ${wall.toFixed(0)} s; ${[...totals].map(([p, t]) => `${p} ${t.toFixed(0)} s`).join(', ')}):`);
for (const s of [...suites].sort((a, b) => b.seconds - a.seconds).slice(0, count)) {
  console.log(`${s.seconds.toFixed(1).padStart(8)} s  ${s.project.padEnd(11)} ${s.path}${s.status === 'passed' ? '' : `  (${s.status})`}`);
}
