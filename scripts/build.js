#!/usr/bin/env node
// Compiles every app and lib in one tsc pass, then rewrites @app/* path aliases in the output; then typechecks the
// browser dashboard (its own tsconfig: DOM types) and bundles it with Vite into dist/dashboard, which the API serves.
// tsc emits even when it reports type errors; every step still runs and the exit code is the first failing step's,
// so CI fails on them.
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const root = join(__dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const run = (name, args) => spawnSync(bin(name), args, { cwd: root, stdio: 'inherit' }).status ?? 1;
const steps = [
  run('tsc', ['-p', 'tsconfig.build.json']),
  run('tsc-alias', ['-p', 'tsconfig.build.json']),
  run('tsc', ['-p', 'apps/dashboard/tsconfig.json']),
  run('vite', ['build', '--config', 'apps/dashboard/vite.config.ts']),
];
process.exit(steps.find((status) => status !== 0) ?? 0);
