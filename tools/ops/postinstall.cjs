#!/usr/bin/env node
// `postinstall`: generates the Prisma client (src/generated/prisma) when the `prisma` CLI is
// installed, i.e. in a development install. A production install (`npm ci --omit=dev`, or the
// image's `npm prune --omit=dev`) has no CLI and needs none: the generated client is compiled into
// dist/ by `npm run build`, which the image runs before pruning.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..', '..');
if (!existsSync(join(root, 'node_modules', 'prisma', 'package.json'))) {
  console.log('› postinstall: no prisma CLI (a production install), skipping prisma generate: dist/ carries the generated client');
  process.exit(0);
}
const result = spawnSync('npm', ['run', '--silent', 'prisma:generate'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(result.status ?? 1);
