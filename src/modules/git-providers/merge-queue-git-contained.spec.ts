import { commit, createBareRepo, git } from '@test/support/git-repos';
import { LocalGitRunner } from './local-git.runner';
import { LocalMergeQueueGit } from './merge-queue-git';

const runner = new LocalGitRunner({ timeoutMs: 30_000 });

describe(`${LocalMergeQueueGit.name}: heads already contained (issue 19: no empty merge)`, () => {
  // real git processes on a loaded machine
  jest.setTimeout(30_000);

  it('adds no commit for a head the base already contains: the candidate is the base', async () => {
    const repo = createBareRepo({ 'a.txt': 'a\n' });
    const local = new LocalMergeQueueGit(repo.path, runner);
    const old = git(repo.path, 'rev-parse', repo.main);
    const next = commit(repo.path, repo.main, { 'b.txt': 'b\n' }, 'next');
    git(repo.path, 'update-ref', 'refs/heads/main', next);
    expect(await local.buildCandidate(next, [{ entryId: 'e1', number: 1, headSha: old }])).toEqual({
      ok: true,
      candidateSha: next,
      landed: [{ entryId: 'e1', number: 1, commits: [] }],
    });
  });

  it('adds no commit for a head that an earlier PR of the candidate brought in', async () => {
    const repo = createBareRepo({ 'a.txt': 'a\n' });
    const local = new LocalMergeQueueGit(repo.path, runner);
    const first = commit(repo.path, repo.main, { 'one.txt': '1\n' }, 'PR 1');
    const stacked = commit(repo.path, first, { 'two.txt': '2\n' }, 'PR 2 built on PR 1');
    const result = await local.buildCandidate(repo.main, [
      { entryId: 'e2', number: 2, headSha: stacked },
      { entryId: 'e1', number: 1, headSha: first },
    ]);
    if (!result.ok) throw new Error('expected a candidate');
    expect(git(repo.path, 'rev-list', '--count', '--merges', `${repo.main}..${result.candidateSha}`)).toBe('1');
    expect(await local.isAncestor(first, result.candidateSha)).toBe(true);
  });
});
