#!/usr/bin/env node
/*
 * `npm test`: the unit project first on every core (its specs share no database, port or process), then the e2e
 * projects (e2e, e2e-baileys) one file at a time, as before. In band the unit specs ran one after another on a 2-core
 * machine with the other core idle; in parallel they take about half as long, and no e2e file runs beside them.
 *
 * Arguments are jest's. `--json --outputFile=<file>` (what .ci/run passes) writes both phases' results to <file>, merged
 * as one run. Any other argument (a path, --selectProjects, -t …) runs plain `jest --runInBand <args>`, as before.
 */
const { spawnSync } = require('node:child_process');
const { readFileSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const args = process.argv.slice(2);
const run = (jestArgs) => spawnSync(process.execPath, [jest, ...jestArgs], { cwd: root, stdio: 'inherit' }).status ?? 1;

const outputArg = args.find((a) => a.startsWith('--outputFile='));
const plain = args.some((a) => a !== '--json' && a !== outputArg);
if (plain) process.exit(run(['--runInBand', ...args]));

const output = outputArg?.slice('--outputFile='.length);
const unitOutput = output && `${output}.unit`;
const unit = run(['--selectProjects', 'unit', '--maxWorkers=100%', ...(output ? ['--json', `--outputFile=${unitOutput}`] : [])]);
const e2e = run(['--selectProjects', 'e2e', 'e2e-baileys', '--runInBand', ...args]);

if (output) {
  const read = (file) => {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return null; // a phase that crashed before writing: its exit code says so
    }
  };
  const [u, e] = [read(unitOutput), read(output)];
  if (u && e) {
    const merged = { ...e, startTime: Math.min(u.startTime, e.startTime), success: u.success && e.success, testResults: [...u.testResults, ...e.testResults] };
    for (const key of Object.keys(e)) if (key.startsWith('num')) merged[key] = u[key] + e[key];
    merged.wasInterrupted = u.wasInterrupted || e.wasInterrupted;
    merged.openHandles = [...(u.openHandles ?? []), ...(e.openHandles ?? [])];
    writeFileSync(output, JSON.stringify(merged));
    rmSync(unitOutput, { force: true });
  }
}
process.exit(unit || e2e);
