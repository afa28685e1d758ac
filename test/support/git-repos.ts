import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PrismaService } from '@/common/prisma/prisma.service';

/** Runs git on a bare repository and returns its trimmed output. */
export function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', repo, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' },
  }).trim();
}

/** A bare repository in a temp dir whose `main` holds `files` (flat names). */
export function createBareRepo(files: Record<string, string> = { 'README.md': 'hello\n' }): { path: string; main: string } {
  const path = join(mkdtempSync(join(tmpdir(), 'mq-repo-')), 'repo.git');
  execFileSync('git', ['init', '--bare', '-q', '-b', 'main', path]);
  const main = commit(path, null, files, 'initial');
  git(path, 'update-ref', 'refs/heads/main', main);
  return { path, main };
}

/** A commit on `parent` with `files` changed (flat names; null deletes), without a work tree. */
export function commit(repo: string, parent: string | null, files: Record<string, string | null>, message: string): string {
  const entries = new Map<string, string>();
  if (parent) {
    for (const line of git(repo, 'ls-tree', parent).split('\n').filter(Boolean)) {
      const [meta, name] = line.split('\t');
      entries.set(name, meta.split(' ')[2]);
    }
  }
  for (const [name, content] of Object.entries(files)) {
    if (content === null) entries.delete(name);
    else entries.set(name, execFileSync('git', ['--git-dir', repo, 'hash-object', '-w', '--stdin'], { input: content, encoding: 'utf8' }).trim());
  }
  const tree = execFileSync('git', ['--git-dir', repo, 'mktree'], {
    input: [...entries].map(([name, sha]) => `100644 blob ${sha}\t${name}\n`).join(''),
    encoding: 'utf8',
  }).trim();
  return git(repo, 'commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message);
}

/**
 * A commit on `parent` with `files` changed at any depth (`services/api/main.ts`; null deletes),
 * built in a temporary index, without a work tree.
 */
export function commitPaths(repo: string, parent: string | null, files: Record<string, string | null>, message: string): string {
  const index = join(mkdtempSync(join(tmpdir(), 'mq-index-')), 'index');
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const run = (args: string[], input?: string) => execFileSync('git', ['--git-dir', repo, ...args], { env, input, encoding: 'utf8' }).trim();
  if (parent) run(['read-tree', parent]);
  const lines = Object.entries(files).map(([path, content]) =>
    content === null ? `0 ${'0'.repeat(40)}\t${path}` : `100644 ${run(['hash-object', '-w', '--stdin'], content)}\t${path}`,
  );
  run(['update-index', '--index-info'], `${lines.join('\n')}\n`);
  return git(repo, 'commit-tree', run(['write-tree']), ...(parent ? ['-p', parent] : []), '-m', message);
}

/** The file at `path` in commit `sha`, or null. */
export function readFile(repo: string, sha: string, path: string): string | null {
  try {
    return execFileSync('git', ['--git-dir', repo, 'show', `${sha}:${path}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/** A LOCAL_GIT code source as POST /code-sources makes one: the bare repository's absolute path, and its file:// URL. */
export async function createLocalCodeSource(prisma: PrismaService, organizationId: string, path: string): Promise<{ id: string }> {
  return prisma.codeSource.create({ data: { organizationId, provider: 'LOCAL_GIT', foreignId: path, nameWithOwner: path, url: `file://${path}` } });
}
