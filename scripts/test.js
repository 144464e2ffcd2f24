#!/usr/bin/env node
/*
 * `npm test`, in three phases, each a jest run of its own:
 * 1. the unit project on every core (its specs share no database, port or process);
 * 2. the e2e projects (e2e, e2e-baileys) as E2E_SHARDS (2) jest processes side by side, each in band and each with a
 *    run of its own (global-setup: database, Redis prefix, pid directory). test/support/e2e-sequencer.js deals the files
 *    to the shards by what they took last time (test/support/suite-times.json), longest first, so the shards end close
 *    together. Every line a shard prints starts with its name (`[e2e 1/2] `): a failure reads whole with
 *    `grep '^\[e2e 1/2\]'`. After the phase, one line per shard: its time, its suites, the ones that failed;
 * 3. the files that must not run beside another (the sequencer's SERIAL), alone and in band, when there are any.
 * E2E_SHARDS=1 makes phases 2 and 3 the single in-band run of both e2e projects they replaced.
 *
 * Arguments are jest's. `--json --outputFile=<file>` (what .ci/run passes) writes every phase's results to <file>, merged
 * as one run, each suite with its `project`. Any other argument (a path, --selectProjects, -t …) runs plain
 * `jest --runInBand <args>`, as before. The exit code is nonzero when any phase failed.
 */
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { suitesOf } = require('./jest-results');
const { ensureLocalServices, LocalServiceError } = require('./local-services');

const root = join(__dirname, '..');
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const sequencer = join(root, 'test', 'support', 'e2e-sequencer.js');
const { SERIAL, PROJECTS_FILE } = require(sequencer);
const args = process.argv.slice(2);

/** the jest processes running, and the signal that stopped the run (no phase starts after it) */
const running = new Set();
let stoppedBy = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stoppedBy = signal;
    for (const child of running) child.kill(signal);
  });
}

/** Writes each whole line of `from` to `to` behind `prefix` (two shards' lines interleave, never their halves). */
function prefixLines(from, to, prefix) {
  let rest = '';
  from.setEncoding('utf8');
  from.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    if (lines.length) to.write(lines.map((line) => `${prefix}${line}\n`).join(''));
  });
  from.on('end', () => rest && to.write(`${prefix}${rest}\n`));
}

/** One jest run; resolves with its exit code (1 for a signal) and its seconds. `prefix`: its output lines carry it. */
function jestRun(jestArgs, { prefix, env = {} } = {}) {
  const started = Date.now();
  const color = prefix && process.stderr.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: '1' } : {};
  const child = spawn(process.execPath, [jest, ...jestArgs], {
    cwd: root,
    env: { ...process.env, ...color, ...env },
    stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  running.add(child);
  if (prefix) {
    prefixLines(child.stdout, process.stdout, prefix);
    prefixLines(child.stderr, process.stderr, prefix);
  }
  return new Promise((resolveRun) => {
    const done = (code) => {
      running.delete(child);
      resolveRun({ code, seconds: (Date.now() - started) / 1000 });
    };
    child.once('error', () => done(1));
    child.once('close', (code) => done(code ?? 1));
  });
}

const outputArg = args.find((a) => a.startsWith('--outputFile='));
const plain = args.some((a) => a !== '--json' && a !== outputArg);
if (plain) {
  jestRun(['--runInBand', ...args]).then(({ code }) => process.exit(code));
} else {
  main().then((code) => process.exit(code));
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null; // a run that crashed before writing: its exit code says so
  }
}

/** A phase's results with each suite's project (`phase.project` for all, or the sequencer's list), or null. */
function resultsOf(phase) {
  const results = readJson(phase.file);
  if (!results) return null;
  const projects = phase.project ? results.testResults.map(() => phase.project) : phase.projectsFile && readJson(phase.projectsFile);
  if (projects?.length === results.testResults.length) results.testResults.forEach((suite, i) => projects[i] && (suite.project = projects[i]));
  return results;
}

/** Jest's aggregated results of several runs as one: counts added, lists joined, the earliest start, success if all. */
function combine(values, key) {
  values = values.filter((v) => v !== undefined);
  const [first] = values;
  if (key === 'startTime') return Math.min(...values);
  if (key === 'success') return values.every(Boolean);
  if (typeof first === 'number') return values.reduce((a, b) => a + b, 0);
  if (typeof first === 'boolean') return values.some(Boolean);
  if (Array.isArray(first)) return values.flat();
  if (first && typeof first === 'object') return Object.fromEntries(Object.keys(first).map((k) => [k, combine(values.map((v) => v?.[k]), k)]));
  return first;
}

/** `e2e 1/2: 812 s, 58 suites, 402 tests passed, 1 failed: test/x.e2e-spec.ts (e2e-baileys)` */
function summary(phase) {
  const seconds = `${Math.round(phase.seconds)} s`;
  const results = resultsOf(phase);
  if (!results) return `${phase.name}: ${seconds}, exit ${phase.code}, no results written`;
  const failed = suitesOf(results).filter((s) => s.status === 'failed').map((s) => `${s.path} (${s.project})`);
  const tests = `${results.numPassedTests} tests passed, ${results.numFailedTests} failed`;
  return `${phase.name}: ${seconds}, ${results.numTotalTestSuites} suites, ${tests}${failed.length ? `; failed suites: ${failed.join(', ')}` : ''}`;
}

async function main() {
  const shards = Number(process.env.E2E_SHARDS ?? 2);
  if (!Number.isInteger(shards) || shards < 1) {
    process.stderr.write(`E2E_SHARDS must be a whole number of 1 or more, not ${JSON.stringify(process.env.E2E_SHARDS)}\n`);
    return 2;
  }
  const output = outputArg && resolve(outputArg.slice('--outputFile='.length));
  const scratch = output ? null : mkdtempSync(join(tmpdir(), 'npm-test-'));
  const base = output ?? join(scratch, 'results.json');
  const phase = (name, file, more = {}) => ({ name, file: `${base}.${file}`, code: 0, seconds: 0, ...more });
  const json = (p) => ['--json', `--outputFile=${p.file}`];
  const e2e = ['--selectProjects', 'e2e', 'e2e-baileys', '--runInBand'];
  const phases = [];
  const started = Date.now();

  /** The shards side by side, then the serial files alone. `env`: the stores every shard's global-setup uses. */
  const sharded = async (env) => {
    const parallel = Array.from({ length: shards }, (_, i) =>
      phase(`e2e ${i + 1}/${shards}`, `e2e-${i + 1}`, { projectsFile: `${base}.e2e-${i + 1}.projects`, shard: `--shard=${i + 1}/${shards}` }),
    );
    const runs = await Promise.all(
      parallel.map((p) =>
        jestRun([...e2e, p.shard, '--passWithNoTests', `--testSequencer=${sequencer}`, ...json(p)], { prefix: `[${p.name}] `, env: { ...env, [PROJECTS_FILE]: p.projectsFile } }),
      ),
    );
    parallel.forEach((p, i) => phases.push(Object.assign(p, runs[i])));
    process.stderr.write(`\n${parallel.map(summary).join('\n')}\n`);
    if (stoppedBy || !SERIAL.length) return;
    const serial = phase('e2e serial', 'e2e-serial', { projectsFile: `${base}.e2e-serial.projects` });
    process.stderr.write(`\ne2e serial (test/support/e2e-sequencer.js SERIAL): ${SERIAL.join(', ')}\n`);
    // the paths first: --selectProjects takes every word after it as a project name
    const serialArgs = [...SERIAL, '--runTestsByPath', ...e2e, `--testSequencer=${sequencer}`, ...json(serial)];
    phases.push(Object.assign(serial, await jestRun(serialArgs, { env: { ...env, [PROJECTS_FILE]: serial.projectsFile } })));
  };

  const unit = phase('unit', 'unit', { project: 'unit' });
  phases.push(Object.assign(unit, await jestRun(['--selectProjects', 'unit', '--maxWorkers=100%', ...json(unit)])));

  if (!stoppedBy && shards === 1) {
    const all = phase('e2e', 'e2e');
    phases.push(Object.assign(all, await jestRun([...e2e, ...json(all)])));
  } else if (!stoppedBy) {
    // one PostgreSQL and Redis for all shards: where none answers, each shard's global-setup would start an embedded one
    // on the same port and data directory, and the first shard to finish would stop it under the other
    const log = (line) => process.stderr.write(`${line}\n`);
    const services = await ensureLocalServices(process.env, { log, pgUrlVariable: 'TEST_PG_URL', redisUrlVariable: 'TEST_REDIS_URL' }).catch((err) => {
      log(err instanceof LocalServiceError ? err.message : String(err?.stack ?? err));
      return null;
    });
    if (!services) phases.push(phase('e2e', 'e2e', { code: 1 }));
    else {
      try {
        await sharded({ ...(services.pgBase && { TEST_PG_URL: services.pgBase }), ...(services.redisUrl && { TEST_REDIS_URL: services.redisUrl }) });
      } finally {
        await services.stop();
      }
    }
  }

  const results = phases.map(resultsOf);
  process.stderr.write(`\nnpm test, ${Math.round((Date.now() - started) / 1000)} s in all:\n${phases.map((p) => `  ${summary(p)}`).join('\n')}\n`);
  if (output && results.some(Boolean)) {
    const merged = combine(results.filter(Boolean), '');
    if (results.some((r) => !r) || stoppedBy) merged.success = false;
    writeFileSync(output, JSON.stringify(merged));
  }
  for (const p of phases) for (const file of [p.file, p.projectsFile]) if (file) rmSync(file, { force: true });
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  if (stoppedBy) return 1;
  return phases.find((p) => p.code !== 0)?.code ?? 0;
}
