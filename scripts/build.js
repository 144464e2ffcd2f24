#!/usr/bin/env node
// Compiles every app and lib in one tsc pass, then rewrites @app/* path aliases in the output.
// tsc emits even when it reports type errors; the exit code is tsc's, so CI fails on them.
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const root = join(__dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const tsc = spawnSync(bin('tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
const alias = spawnSync(bin('tsc-alias'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
process.exit(tsc.status || alias.status || 0);
