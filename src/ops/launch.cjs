#!/usr/bin/env node
// Entry of `npm start`, `npm test` and `npm run bench:api`. Plain CommonJS with no dependencies,
// because it runs before dependencies exist: it installs them when missing or stale, then hands
// over to the TypeScript task under src/ops (run through tsx).
'use strict';
const { spawnSync, spawn } = require('node:child_process');
const { existsSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..', '..');
const tasks = { start: 'start.ts', test: 'test.ts', 'bench-api': '../../test/bench/api/run.ts' };
const task = process.argv[2];
if (!tasks[task]) {
  console.error(`usage: launch.cjs <${Object.keys(tasks).join('|')}>`);
  process.exit(64);
}

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`Node.js ${process.versions.node} is too old: this project needs Node.js 20.19 or newer (NestJS 12 is ESM-only).`);
  process.exit(1);
}

function dependenciesStale() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(marker) || !existsSync(join(root, 'node_modules', '.bin', 'tsx'))) return true;
  const installed = statSync(marker).mtimeMs;
  return ['package.json', 'package-lock.json'].some((f) => existsSync(join(root, f)) && statSync(join(root, f)).mtimeMs > installed + 1000);
}

if (dependenciesStale()) {
  console.log('› installing dependencies (npm ci)…');
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    console.error('npm ci failed: check your network access to the npm registry and run it again.');
    process.exit(result.status || 1);
  }
}

const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, tasks[task]), ...process.argv.slice(3)], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
