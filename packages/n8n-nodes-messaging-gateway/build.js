#!/usr/bin/env node
// Compiles the package to dist/ with its own TypeScript (tsc -p tsconfig.json) and copies what n8n loads beside the
// code: the icons. `npm run build` here, or `npm run build:n8n-nodes` from the repository (which installs this
// package's devDependencies first when they are missing).
const { spawnSync } = require('node:child_process');
const { cpSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const here = __dirname;
rmSync(join(here, 'dist'), { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc', { paths: [here] });
const status = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { cwd: here, stdio: 'inherit' }).status ?? 1;
if (status !== 0) process.exit(status);
cpSync(join(here, 'icons'), join(here, 'dist', 'icons'), { recursive: true });
