import { readFile, stat } from 'node:fs/promises';
import { basename, isAbsolute, normalize, relative } from 'node:path';
import { ProviderFailure, type GitProviderClient, type ProviderAccount, type RepositoryInfo } from './git-provider.port';
import type { LocalGitRunner } from './local-git.runner';
const GIT_DEFAULT_DESCRIPTION = /^Unnamed repository; edit this file 'description' to name the repository\.\s*$/;

/**
 * LOCAL_GIT: bare repositories on this server's disk, read through the `git` CLI (no shell). For
 * development, tests, the demo and the merge-queue engine. What git does not know gets a
 * documented default: owner `local`, private, in the namespace, collaborators = distinct authors.
 */
export class LocalGitClient implements GitProviderClient {
  constructor(private readonly options: { root?: string; runner: LocalGitRunner }) {}

  currentAccount(): Promise<ProviderAccount> {
    return Promise.resolve({ id: 'local', login: 'local' });
  }

  userInstallationIds(): Promise<string[]> {
    return Promise.resolve([]);
  }

  /** Why `path` cannot be a LOCAL_GIT repository path, or undefined. */
  pathProblem(path: string): string | undefined {
    if (!isAbsolute(path) || normalize(path) !== path.replace(/\/+$/, '') || path.includes('\0')) return 'must be a normalized absolute path';
    if (this.options.root) {
      const rel = relative(this.options.root, path);
      if (rel.startsWith('..') || isAbsolute(rel)) return `must be under ${this.options.root}`;
    }
    return undefined;
  }

  async repository(path: string): Promise<RepositoryInfo> {
    const problem = this.pathProblem(path);
    if (problem) throw new ProviderFailure('rejected', `the repository path ${problem}`);
    try {
      if (!(await stat(path)).isDirectory()) throw new Error('not a directory');
      if ((await this.git(path, 'rev-parse', '--is-bare-repository')).trim() !== 'true') throw new Error('not bare');
    } catch {
      throw new ProviderFailure('not_found', `${path} is not a bare git repository`);
    }
    const head = (await this.git(path, 'symbolic-ref', '--short', 'HEAD').catch(() => 'main')).trim() || 'main';
    const latest = (await this.git(path, 'for-each-ref', '--sort=-committerdate', '--count=1', '--format=%(committerdate:iso-strict)', 'refs/heads')).trim();
    const authors = (await this.git(path, 'log', '--all', '--format=%ae').catch(() => '')).split('\n').filter(Boolean);
    const description = await readFile(`${path}/description`, 'utf8').catch(() => '');
    const name = basename(path).replace(/\.git$/, '');
    return {
      collaborators: { totalCount: new Set(authors).size },
      defaultBranch: { name: head },
      defaultBranchRef: { name: head },
      description: GIT_DEFAULT_DESCRIPTION.test(description) ? '' : description.trim(),
      foreignId: path,
      isInNamespace: true,
      isPrivate: true,
      name,
      nameWithOwner: `local/${name}`,
      owner: { login: 'local' },
      pushedAt: latest ? new Date(latest).toISOString() : (await stat(path)).mtime.toISOString(),
      url: `file://${path}`,
    };
  }

  private git(path: string, ...args: string[]): Promise<string> {
    return this.options.runner.output(path, args);
  }
}
