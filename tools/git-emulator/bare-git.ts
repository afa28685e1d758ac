/**
 * The git CLI on the emulator's bare repositories: creating one, and every read and write the git
 * data, compare, merge and GraphQL endpoints make. Refs given to it are always full (`refs/...`) and
 * commits hex, so nothing a caller sends can be read by git as an option.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { iso } from './http';

const execFileAsync = promisify(execFile);

/** A commit id, full or abbreviated (the git data endpoints take either). */
export const SHA_PATTERN = /^[0-9a-f]{7,40}$/;

export interface Signature {
  name: string;
  email: string;
  date: string;
}

/** A file a diff changed, as GitHub's compare lists it. */
export interface ChangedFile {
  filename: string;
  status: string;
  previous_filename?: string;
  /** The blob at the newer side (zeros when removed). */
  sha: string;
  additions: number;
  deletions: number;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  message: string;
}

/** `git diff --name-status` letters as GitHub names file statuses. */
const DIFF_STATUS: Record<string, string> = { A: 'added', D: 'removed', M: 'modified', R: 'renamed', C: 'copied', T: 'changed' };

/**
 * The git CLI on one bare repository, for the git data endpoints. Refs given to it are always full
 * (`refs/...`) and commits hex, so nothing a caller sends can be read by git as an option.
 */
export class BareRepository {
  constructor(private readonly path: string) {}

  async resolveRef(ref: string): Promise<string | null> {
    const { code, stdout } = await this.git(['rev-parse', '--verify', '--quiet', ref], [1]);
    return code === 0 ? stdout : null;
  }

  /** A branch name or a commit id, as the commit it names; null when there is none. */
  async resolveCommitish(name: string): Promise<string | null> {
    const rev = SHA_PATTERN.test(name) ? name : `refs/heads/${name}`;
    if (!SHA_PATTERN.test(name) && !(await this.validRef(rev))) return null;
    const { code, stdout } = await this.git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], [1, 128]);
    return code === 0 ? stdout : null;
  }

  async validRef(ref: string): Promise<boolean> {
    return ref.startsWith('refs/') && (await this.git(['check-ref-format', ref], [1])).code === 0;
  }

  async hasObject(sha: string): Promise<boolean> {
    return SHA_PATTERN.test(sha) && (await this.git(['cat-file', '-e', sha], [1, 128])).code === 0;
  }

  async objectType(sha: string): Promise<string> {
    return (await this.git(['cat-file', '-t', sha])).stdout;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await this.git(['merge-base', '--is-ancestor', ancestor, descendant], [1])).code === 0;
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    const { code, stdout } = await this.git(['merge-base', a, b], [1]);
    return code === 0 ? stdout : null;
  }

  /** `git diff -M` from `from` to `to` as GitHub's compare lists files: filename, status, previous_filename on a rename, blob and line counts. */
  async changedFiles(from: string, to: string): Promise<ChangedFile[]> {
    const raw = (await this.git(['diff', '--raw', '--numstat', '-z', '-M', '--no-abbrev', from, to])).stdout.split('\0');
    const files: ChangedFile[] = [];
    let i = 0;
    // --raw: ":mode mode old new STATUS\0path\0[path\0]" for each file, then --numstat: "add\tdel\tpath\0" (renames: "add\tdel\t\0old\0new\0").
    while (i < raw.length && raw[i].startsWith(':')) {
      const [, , , blob, code] = raw[i++].slice(1).split(' ');
      const status = DIFF_STATUS[code[0]] ?? 'changed';
      if (code[0] === 'R' || code[0] === 'C') {
        files.push({ filename: raw[i + 1], status, previous_filename: raw[i], sha: blob, additions: 0, deletions: 0 });
        i += 2;
      } else files.push({ filename: raw[i++], status, sha: blob, additions: 0, deletions: 0 });
    }
    for (const file of files) {
      if (i >= raw.length) break;
      const [add, del, path] = raw[i++].split('\t');
      if (path === '') i += 2;
      file.additions = Number(add) || 0;
      file.deletions = Number(del) || 0;
    }
    return files;
  }

  /** The branches whose history contains `sha`, with their heads. */
  async branchesContaining(sha: string): Promise<{ name: string; sha: string }[]> {
    if (!SHA_PATTERN.test(sha)) return [];
    const { code, stdout } = await this.git(['for-each-ref', '--contains', sha, '--format=%(refname:strip=2) %(objectname)', 'refs/heads'], [129, 128]);
    if (code !== 0) return [];
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, head] = line.split(' ');
        return { name, sha: head };
      });
  }

  /** The files a commit added, removed and modified against its first parent (all added for a root commit), as push payloads list them. */
  async commitFiles(sha: string): Promise<{ added: string[]; removed: string[]; modified: string[] }> {
    const fields = (await this.git(['diff-tree', '--root', '--no-commit-id', '-r', '-z', '--name-status', '--no-renames', sha])).stdout.split('\0');
    const files = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
    for (let i = 0; i < fields.length - 1; i += 2) {
      const code = fields[i][0];
      (code === 'A' ? files.added : code === 'D' ? files.removed : files.modified).push(fields[i + 1]);
    }
    return files;
  }

  /** Commits in `range` (`a..b`), oldest first. */
  async revList(range: string): Promise<string[]> {
    return (await this.git(['rev-list', '--reverse', range])).stdout.split('\n').filter(Boolean);
  }

  /** Moves `ref` to `sha` only if it is at `old` ('' = must not exist); false when it was not. */
  async updateRef(ref: string, sha: string, old: string): Promise<boolean> {
    return (await this.git(['update-ref', ref, sha, old], [1, 128])).code === 0;
  }

  /** One `git update-ref --stdin` transaction (all or nothing); false when git refused it. */
  updateRefs(input: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const child = spawn('git', ['--git-dir', this.path, 'update-ref', '--stdin'], {
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      child.on('error', reject);
      child.on('close', (code) => resolve(code === 0));
      child.stdin.end(input);
    });
  }

  async deleteRef(ref: string, old: string): Promise<boolean> {
    return (await this.git(['update-ref', '-d', ref, old], [1, 128])).code === 0;
  }

  /** The tree of merging `theirs` into `ours`, without a work tree; null on a conflict. */
  async mergeTree(ours: string, theirs: string): Promise<string | null> {
    const { code, stdout } = await this.git(['merge-tree', '--write-tree', '--no-messages', ours, theirs], [1]);
    return code === 0 ? stdout.split('\n')[0] : null;
  }

  /** `who` authors and commits, unless `committer` names another committer; a `date` on either is theirs (else now). */
  async commitTree(
    tree: string,
    parents: string[],
    message: string,
    who: { name: string; email: string; date?: string },
    committer: { name: string; email: string; date?: string } = who,
  ): Promise<string> {
    const env: Record<string, string> = {
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_COMMITTER_NAME: committer.name,
      GIT_COMMITTER_EMAIL: committer.email,
      ...(who.date && { GIT_AUTHOR_DATE: who.date }),
      ...(committer.date && { GIT_COMMITTER_DATE: committer.date }),
    };
    return (await this.git(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message], [], env)).stdout;
  }

  async commit(sha: string): Promise<CommitInfo | null> {
    const { code, stdout } = await this.git(
      ['show', '-s', '--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B', `${sha}^{commit}`, '--'],
      [128],
    );
    if (code !== 0) return null;
    const [full, tree, parents, an, ae, ad, cn, ce, cd, message] = stdout.split('\0');
    return {
      sha: full,
      tree,
      parents: parents.split(' ').filter(Boolean),
      author: { name: an, email: ae, date: iso(Date.parse(ad)) },
      committer: { name: cn, email: ce, date: iso(Date.parse(cd)) },
      message: message.replace(/\n+$/, ''),
    };
  }

  private async git(args: string[], okCodes: number[] = [], env: Record<string, string> = {}): Promise<{ code: number; stdout: string }> {
    try {
      const { stdout } = await execFileAsync('git', ['--git-dir', this.path, ...args], { env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' } });
      return { code: 0, stdout: stdout.trim() };
    } catch (error) {
      const e = error as { code?: unknown; stdout?: string };
      if (typeof e.code === 'number' && okCodes.includes(e.code)) return { code: e.code, stdout: (e.stdout ?? '').trim() };
      throw error;
    }
  }
}

/** A new bare repository at `path` whose `branch` holds one commit of an empty tree. */
export function initBareRepository(path: string, branch: string, description?: string): void {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Emulator',
    GIT_AUTHOR_EMAIL: 'emulator@example.com',
    GIT_COMMITTER_NAME: 'Emulator',
    GIT_COMMITTER_EMAIL: 'emulator@example.com',
  };
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', path, ...args], { env, input: '' })
      .toString()
      .trim();
  execFileSync('git', ['init', '--bare', '--quiet', path]);
  git('symbolic-ref', 'HEAD', `refs/heads/${branch}`);
  const tree = git('mktree');
  const commit = git('commit-tree', tree, '-m', 'Initial commit');
  git('update-ref', `refs/heads/${branch}`, commit);
  if (description !== undefined) writeFileSync(join(path, 'description'), `${description}\n`);
}

/** The newest commit date on any branch (GitHub's `pushed_at`), now when there is none. */
export function lastCommitDate(path: string): string {
  const out = execFileSync('git', [
    '--git-dir',
    path,
    'for-each-ref',
    '--sort=-committerdate',
    '--count=1',
    '--format=%(committerdate:iso-strict)',
    'refs/heads',
  ])
    .toString()
    .trim();
  return (out ? new Date(out) : new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
