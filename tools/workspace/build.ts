import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function isFresh(): boolean {
  const outputs = ['main.js', 'worker.js', 'cli.js'].map((f) => join(ROOT, 'dist', f));
  const builtAt = outputs.every(existsSync) ? Math.min(...outputs.map((f) => statSync(f).mtimeMs)) : 0;
  const sourcesAt = Math.max(newestMtime(join(ROOT, 'src')), statSync(join(ROOT, 'prisma', 'schema.prisma')).mtimeMs);
  return builtAt > sourcesAt;
}

const LOCK = join(ROOT, '.build-lock');
const STALE_LOCK_MS = 5 * 60_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Builds dist/ (prisma generate + nest build) when it is missing or older than the sources. One
 * build at a time across processes (parallel Jest workers each start built processes): the lock is
 * a directory, whose creation is atomic; a waiter finds dist/ fresh once the builder is done.
 */
export function buildIfStale(): void {
  if (isFresh()) return;
  for (const deadline = Date.now() + STALE_LOCK_MS; ;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // A lock left by a killed build is taken over once it is older than any build takes.
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`another build holds ${LOCK}`);
      sleepSync(250);
    }
  }
  try {
    if (isFresh()) return;
    process.stdout.write('› building (prisma generate + nest build)…\n');
    const result = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (result.status !== 0) throw new Error('the build failed (see above)');
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
