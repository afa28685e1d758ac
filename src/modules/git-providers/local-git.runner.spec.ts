import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commit, createBareRepo, git } from '@test/support/git-repos';
import { ProviderFailure } from './git-provider.port';
import { LocalGitRunner } from './local-git.runner';
import { LocalMergeQueueGit } from './merge-queue-git';

const runner = new LocalGitRunner({ timeoutMs: 30_000 });

/** Sets process env variables for one test (the server's secrets live there) and puts them back. */
function withEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

describe(LocalGitRunner.name, () => {
  jest.setTimeout(30_000);

  it('gives git and everything it starts a minimal environment: no DATABASE_URL, no CREDENTIALS_KEYS, a HOME nothing can be read from or written to', async () => {
    const restore = withEnv({ DATABASE_URL: 'postgresql://leak:secret@db/leak', CREDENTIALS_KEYS: 'k1:c2VjcmV0' });
    try {
      const repo = createBareRepo();
      // A `!` alias runs a shell with git's environment: what a hook or a helper would see.
      git(repo.path, 'config', 'alias.env', '!env');
      const seen = (await runner.output(repo.path, ['env'])).split('\n').filter(Boolean);
      const names = seen.map((line) => line.split('=')[0]);
      expect(names).not.toContain('DATABASE_URL');
      expect(names).not.toContain('CREDENTIALS_KEYS');
      expect(seen.join('\n')).not.toContain('secret');
      expect(seen).toContain('LANG=C');
      expect(seen).toContain('GIT_CONFIG_NOSYSTEM=1');
      expect(seen).toContain('GIT_CONFIG_GLOBAL=/dev/null');
      expect(seen).toContain('HOME=/dev/null');
      expect(seen).toContain('XDG_CONFIG_HOME=/dev/null');
      // The same alias run the ordinary way sees the secret: the assertion above can fail.
      expect(git(repo.path, 'env')).toContain('DATABASE_URL=postgresql://leak:secret@db/leak');
    } finally {
      restore();
    }
  });

  it('reads no global git config (HOME or GIT_CONFIG_GLOBAL of the server process)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'git-home-'));
    writeFileSync(join(home, '.gitconfig'), '[alias]\n\tfromglobal = !echo global\n');
    const restore = withEnv({ HOME: home, GIT_CONFIG_GLOBAL: join(home, '.gitconfig') });
    try {
      const repo = createBareRepo();
      expect(git(repo.path, 'fromglobal')).toBe('global');
      await expect(runner.run(repo.path, ['fromglobal'])).rejects.toThrow(/not a git command/);
    } finally {
      restore();
    }
  });

  it('runs no hook of the repository (a reference-transaction hook on a ref update)', async () => {
    const repo = createBareRepo();
    const marker = join(mkdtempSync(join(tmpdir(), 'hook-')), 'ran');
    mkdirSync(join(repo.path, 'hooks'), { recursive: true });
    const hook = join(repo.path, 'hooks', 'reference-transaction');
    writeFileSync(hook, `#!/bin/sh\necho "$DATABASE_URL" >> '${marker}'\n`);
    chmodSync(hook, 0o755);
    const next = commit(repo.path, repo.main, { 'b.txt': 'b\n' }, 'next');
    const local = new LocalMergeQueueGit(repo.path, runner);
    const fence = { ref: 'refs/heads/mq-fence/q', sha: await local.moveFence('refs/heads/mq-fence/q', 'main', true) };
    expect(await local.land('main', next, repo.main, fence)).toBe(true);
    expect(await local.readRef('main')).toBe(next);
    expect(existsSync(marker)).toBe(false);
    // The hook is a working one: git run the ordinary way runs it.
    git(repo.path, 'update-ref', 'refs/heads/other', next);
    expect(existsSync(marker)).toBe(true);
  });

  it('kills a command (and what it started) past the timeout, as a provider timeout', async () => {
    const repo = createBareRepo();
    git(repo.path, 'config', 'alias.slow', '!sleep 20');
    const quick = new LocalGitRunner({ timeoutMs: 300 });
    const started = Date.now();
    const failure = await quick.run(repo.path, ['slow']).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderFailure);
    expect((failure as ProviderFailure).kind).toBe('timeout');
    // The sleep holds git's output open: the call returns only because the whole group was killed.
    expect(Date.now() - started).toBeLessThan(10_000);
    // A command within the timeout answers as before.
    expect((await quick.output(repo.path, ['rev-parse', 'main'])).trim()).toBe(repo.main);
  });

  it('answers expected exit codes and names the command of an unexpected one', async () => {
    const repo = createBareRepo();
    expect(await runner.run(repo.path, ['rev-parse', '--verify', '--quiet', 'refs/heads/missing'], { okCodes: [1] })).toEqual({ code: 1, stdout: '' });
    await expect(runner.run(repo.path, ['rev-parse', '--verify', 'refs/heads/missing'])).rejects.toThrow(/^git rev-parse failed \(exit 128\)/);
  });
});
