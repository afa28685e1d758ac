import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, normalize, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ProviderFailure, type GitProviderClient, type ProviderAccount, type RepositoryInfo } from './git-provider.port';
import type { LocalGitRunner } from './local-git.runner';
const GIT_DEFAULT_DESCRIPTION = /^Unnamed repository; edit this file 'description' to name the repository\.\s*$/;

/** `child` is `parent` or lies under it (both absolute and normalized). */
function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * LOCAL_GIT: bare repositories on this server's disk under GIT_LOCAL_ROOT, read through the `git`
 * CLI (no shell). For development, tests, the demo and the merge-queue engine. What git does not
 * know gets a documented default: owner `local`, private, in the namespace, collaborators =
 * distinct authors.
 *
 * A path is canonicalised once (`usablePath`: syntax, then `realpath`, then the root) and that
 * canonical path is what is stored and used: no percent-decoding anywhere, and a symlink under the
 * root that leads out of it is refused.
 */
export class LocalGitClient implements GitProviderClient {
  constructor(private readonly options: { root: string; runner: LocalGitRunner }) {}

  currentAccount(): Promise<ProviderAccount> {
    return Promise.resolve({ id: 'local', login: 'local' });
  }

  userInstallationIds(): Promise<string[]> {
    return Promise.resolve([]);
  }

  /** Why `path` cannot be a LOCAL_GIT repository path, syntactically, or undefined. */
  pathProblem(path: string): string | undefined {
    if (!isAbsolute(path) || normalize(path) !== path.replace(/\/+$/, '') || path.includes('\0')) return 'must be a normalized absolute path';
    if (!within(this.options.root, path)) return `must be under ${this.options.root}`;
    return undefined;
  }

  /**
   * The canonical path of the repository at `path` (symlinks resolved), checked to lie under the
   * root (itself resolved): what a code source stores and what git is run on. A ProviderFailure
   * (`rejected`, or `not_found` when nothing is there) otherwise.
   */
  async usablePath(path: string): Promise<string> {
    const problem = this.pathProblem(path);
    if (problem) throw new ProviderFailure('rejected', `the repository path ${problem}`);
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      throw new ProviderFailure('not_found', `${path} is not a bare git repository`);
    }
    const root = await realpath(this.options.root).catch(() => this.options.root);
    if (!within(root, real)) throw new ProviderFailure('rejected', `the repository path must be under ${this.options.root} (it leads to ${real})`);
    return real;
  }

  /**
   * The directory of one organization's repositories: `<root>/<organization id>` (the root
   * resolved). A new LOCAL_GIT code source must lie under its organization's directory, so a
   * repository on the shared disk belongs to the organization whose directory holds it, never to
   * whoever attaches it first (issue 41).
   */
  async organizationDirectory(organizationId: string): Promise<string> {
    const root = await realpath(this.options.root).catch(() => this.options.root);
    return join(root, organizationId);
  }

  /** Whether the canonical `path` lies under `directory`. */
  contains(directory: string, path: string): boolean {
    return within(directory, path);
  }

  async repository(given: string): Promise<RepositoryInfo> {
    const path = await this.usablePath(given);
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
      url: pathToFileURL(path).href,
    };
  }

  private git(path: string, ...args: string[]): Promise<string> {
    return this.options.runner.output(path, args);
  }
}
