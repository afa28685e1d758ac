import { spawn } from 'node:child_process';
import { ProviderFailure } from './git-provider.port';

/** A git command that ran and failed (an exit code the caller did not expect). */
export class GitCommandError extends Error {}

export interface LocalGitRunnerOptions {
  /** One command, start to exit; past it the command's whole process group is killed. */
  timeoutMs: number;
}

export interface GitRun {
  /** Exit codes that are answers, not failures (`rev-parse --verify` gives 1 for a missing ref). */
  okCodes?: readonly number[];
  /** Written to the command's standard input. */
  input?: string;
  /** Extra environment for this command (a commit identity); added to the minimal one. */
  env?: Record<string, string>;
}

const MAX_OUTPUT = 16 * 1024 * 1024;

/**
 * HOME and XDG_CONFIG_HOME of every git command: a path under which nothing exists and nothing can
 * be created (`/dev/null/.gitconfig` is ENOTDIR, which git reads as "no such file"). No
 * ~/.gitconfig, ~/.config/git or credential store of the server's user is read, and no temporary
 * directory is made that a process would have to remove on exit.
 */
const NO_HOME = '/dev/null';

/**
 * The one way this server runs the `git` CLI on a LOCAL_GIT repository (code sources read by
 * LocalGitClient, the merge-queue engine's LocalMergeQueueGit). Every command:
 *   - gets a minimal environment (PATH, HOME=/dev/null, LANG=C), never the process's own, which
 *     holds DATABASE_URL and CREDENTIALS_KEYS;
 *   - reads no system or global git config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null);
 *   - runs no repository hook (`-c core.hooksPath=/dev/null`: a repository on disk is not trusted
 *     to run code in the server's process environment);
 *   - is killed with its whole process group (a `!` alias or anything it started) past the timeout,
 *     and then fails as ProviderFailure('timeout'), like a provider that does not answer.
 * No shell is involved: arguments go to git as they are.
 */
export class LocalGitRunner {
  constructor(private readonly options: LocalGitRunnerOptions) {}

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** The environment every command gets (exported for the tests that prove nothing else leaks). */
  static environment(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: NO_HOME,
      XDG_CONFIG_HOME: NO_HOME,
      LANG: 'C',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      ...extra,
    };
  }

  /**
   * Runs `git --git-dir <gitDir> <args>`; resolves with the exit code (0 or one of `okCodes`) and
   * standard output. Another exit code is a GitCommandError naming the command and its stderr.
   */
  run(gitDir: string, args: readonly string[], options: GitRun = {}): Promise<{ code: number; stdout: string }> {
    const okCodes = options.okCodes ?? [];
    const argv = ['-c', 'core.hooksPath=/dev/null', '--git-dir', gitDir, ...args];
    return new Promise((resolve, reject) => {
      // Its own process group, so that a timeout kills what git started too (a `!` alias, a helper).
      const child = spawn('git', argv, { env: LocalGitRunner.environment(options.env), detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let size = 0;
      let failure: Error | undefined;
      const kill = (why: Error) => {
        failure ??= why;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = setTimeout(
        () => kill(new ProviderFailure('timeout', `git ${args[0]} did not finish within ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
      const collect = (into: Buffer[]) => (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_OUTPUT) kill(new GitCommandError(`git ${args[0]} wrote more than ${MAX_OUTPUT} bytes`));
        else into.push(chunk);
      };
      child.stdout.on('data', collect(out));
      child.stderr.on('data', collect(err));
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input ?? '');
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(new GitCommandError(`git ${args[0]} could not start: ${error.message}`));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        const stdout = Buffer.concat(out).toString('utf8');
        if (failure) return reject(failure);
        if (code === 0 || (code !== null && okCodes.includes(code))) return resolve({ code, stdout });
        const stderr = Buffer.concat(err).toString('utf8').trim().slice(0, 500);
        reject(new GitCommandError(`git ${args[0]} failed (${code === null ? 'killed' : `exit ${code}`}): ${stderr}`));
      });
    });
  }

  /** Standard output of a command that must succeed. */
  async output(gitDir: string, args: readonly string[]): Promise<string> {
    return (await this.run(gitDir, args)).stdout;
  }
}
