/*
 * The e2e phase's test sequencer (scripts/test.js passes it with `--shard=i/n`; docs/testing.md, "What a suite may
 * cost"). Jest's own `--shard` splits the files by a hash of their paths, whatever they cost: one shard could get the
 * three slowest suites. Here each (project, file) weighs what test/support/suite-times.json says it took, and the
 * files are dealt longest first, each to the shard with the least time so far, so the shards end close together. Every
 * shard computes the same deal from the same list and table, and keeps its own part. The files of SERIAL are in no
 * shard: scripts/test.js runs them alone after the shards. Plain JavaScript: jest loads a sequencer without a transform.
 */
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const TestSequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '..', '..');

/** test/support/suite-times.json: project → repository path → seconds (scripts/suite-times.js refreshes it). */
const TIMES_FILE = join(__dirname, 'suite-times.json');

/**
 * Files that must not run beside another jest process, with the reason: scripts/test.js runs them after the shards,
 * one at a time (in both projects, for a file of the engine matrix). None today: every file has a run of its own
 * (database, Redis prefix, pid directory), every port is a free one, every broker name is per process.
 */
const SERIAL = [];

/** What a file the table does not know yet weighs: what docs/testing.md lets a new suite cost. */
const DEFAULT_SECONDS = 60;

/** Where scripts/test.js wants each result's project written (jest's --json names a file, not its project). */
const PROJECTS_FILE = 'E2E_PROJECTS_FILE';

function readTimes() {
  try {
    return JSON.parse(readFileSync(TIMES_FILE, 'utf8'));
  } catch {
    return {}; // no table: every file weighs the default, the deal is still even by count
  }
}

const projectOf = (config) => (typeof config.displayName === 'object' ? config.displayName?.name : config.displayName) ?? 'default';
const pathOf = (file) => relative(ROOT, file).split('\\').join('/');

/**
 * Longest first, each to the shard with the least time so far (ties: the lower shard; equal weights: by key, so every
 * process deals alike). `items`: { key, seconds }; returns one { seconds, items } per shard.
 */
function deal(items, shardCount) {
  const shards = Array.from({ length: shardCount }, () => ({ seconds: 0, items: [] }));
  const order = [...items].sort((a, b) => b.seconds - a.seconds || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const item of order) {
    const least = shards.reduce((min, shard) => (shard.seconds < min.seconds ? shard : min));
    least.items.push(item);
    least.seconds += item.seconds;
  }
  return shards;
}

class E2eSequencer extends TestSequencer {
  constructor(options) {
    super(options);
    this.times = readTimes();
  }

  /** The table's seconds for this (project, file), or the default. */
  seconds(test) {
    return this.times[projectOf(test.context.config)]?.[pathOf(test.path)] ?? DEFAULT_SECONDS;
  }

  shard(tests, { shardIndex, shardCount }) {
    const items = tests
      .filter((test) => !SERIAL.includes(pathOf(test.path)))
      .map((test) => ({ test, key: `${projectOf(test.context.config)} ${pathOf(test.path)}`, seconds: this.seconds(test) }));
    const shards = deal(items, shardCount);
    const mine = shards[shardIndex - 1];
    const estimates = shards.map((s, i) => `${i + 1}: ${s.items.length} files, ~${Math.round(s.seconds)} s`).join('; ');
    process.stderr.write(`e2e shard ${shardIndex}/${shardCount} by test/support/suite-times.json (${estimates})\n`);
    return mine.items.map((item) => item.test);
  }

  /** Longest first, as the deal went (the order does not change an in-band run's total). */
  sort(tests) {
    return [...tests].sort((a, b) => this.seconds(b) - this.seconds(a) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  cacheResults(tests, results) {
    super.cacheResults(tests, results);
    // each result's project, in the order of the --json file's testResults (scripts/test.js stamps them into it)
    const file = process.env[PROJECTS_FILE];
    if (file) writeFileSync(file, JSON.stringify(results.testResults.map((r) => (r.displayName ? projectOf(r) : null))));
  }
}

module.exports = E2eSequencer;
module.exports.SERIAL = SERIAL;
module.exports.DEFAULT_SECONDS = DEFAULT_SECONDS;
module.exports.PROJECTS_FILE = PROJECTS_FILE;
module.exports.TIMES_FILE = TIMES_FILE;
module.exports.deal = deal;
