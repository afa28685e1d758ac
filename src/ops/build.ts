import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './services';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ (prisma generate + nest build) when it is missing or older than the sources. */
export function buildIfStale(): void {
  const outputs = ['main.js', 'worker.js', 'cli.js'].map((f) => join(ROOT, 'dist', f));
  const builtAt = outputs.every(existsSync) ? Math.min(...outputs.map((f) => statSync(f).mtimeMs)) : 0;
  const sourcesAt = Math.max(newestMtime(join(ROOT, 'src')), statSync(join(ROOT, 'prisma', 'schema.prisma')).mtimeMs);
  if (builtAt > sourcesAt) return;
  process.stdout.write('› building (prisma generate + nest build)…\n');
  const result = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('the build failed (see above)');
}
