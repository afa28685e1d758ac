#!/usr/bin/env node
// Entry of `npm start`, `npm test`, `npm run image:rehearse`, `npm run bench:api`, `npm run bench:module-versions`, `npm run bench:usage-import` and `npm run bench:merge-queue-engine`. Plain CommonJS with no dependencies,
// because it runs before dependencies exist: it installs them when missing or stale, then hands
// over to the TypeScript task under tools/ops (run through tsx).
'use strict';
const { spawnSync, spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..', '..');
const tasks = {
  start: 'start.ts',
  test: 'test.ts',
  'bench-api': '../../test/bench/api/run.ts',
  'bench-module-versions': '../../test/bench/module-versions/run.ts',
  'bench-usage-import': '../../test/bench/usage-import/run.ts',
  'bench-merge-queue-engine': '../../test/bench/merge-queue-engine/run.ts',
  'image-rehearse': 'image-rehearse.ts',
};
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

// What was installed is recorded as a hash of the manifest and lockfile, so a changed or freshly
// cloned project installs again and an unchanged one starts at once.
const stampFile = join(root, 'node_modules', '.dpa-install-stamp');
function manifestHash() {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) if (existsSync(join(root, file))) hash.update(readFileSync(join(root, file)));
  return hash.digest('hex');
}

function dependenciesStale() {
  if (!existsSync(join(root, 'node_modules', '.bin', 'tsx'))) return true;
  return !existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== manifestHash();
}

if (dependenciesStale()) {
  // npm ci: exactly the lockfile, as CI and Dockerfiles install. The lock lists every platform's
  // optional binaries, so it is complete on any machine.
  console.log('› installing dependencies (npm ci)…');
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    console.error(
      'npm ci failed: if you changed package.json, run npm install to update package-lock.json; otherwise check your network access to the npm registry and run it again.',
    );
    process.exit(result.status || 1);
  }
  writeFileSync(stampFile, manifestHash());
}

const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, tasks[task]), ...process.argv.slice(3)], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
