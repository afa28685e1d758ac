import { commit, createBareRepo, git, readFile } from '@test/support/git-repos';
import { LocalGitRunner } from './local-git.runner';
import { LocalMergeQueueGit } from './merge-queue-git';

const runner = new LocalGitRunner({ timeoutMs: 30_000 });

// Real git processes: under a loaded CI machine the 5 s default is too short (as for the GitHub spec).
jest.setTimeout(30_000);

describe(LocalMergeQueueGit.name, () => {
  it('builds the same candidate twice from the same base and heads, holding every head', async () => {
    const repo = createBareRepo({ 'a.txt': 'a\n' });
    const local = new LocalMergeQueueGit(repo.path, runner);
    const heads = [1, 2].map((n) => ({ entryId: `e${n}`, number: n, headSha: commit(repo.path, repo.main, { [`pr-${n}.txt`]: `${n}\n` }, `PR ${n}`) }));
    const first = await local.buildCandidate(repo.main, heads, 'refs/heads/mq/q/b1');
    const second = await local.buildCandidate(repo.main, heads, 'refs/heads/mq/q/b1');
    expect(first).toEqual(second);
    if (!first.ok) throw new Error('expected a candidate');
    expect(readFile(repo.path, first.candidateSha, 'pr-1.txt')).toBe('1\n');
    expect(readFile(repo.path, first.candidateSha, 'pr-2.txt')).toBe('2\n');
    expect(await local.isAncestor(repo.main, first.candidateSha)).toBe(true);
  });

  it.each(['squash', 'rebase'] as const)('builds the same %s candidate twice, recording the commits each PR added', async (method) => {
    const repo = createBareRepo({ 'a.txt': 'a\n' });
    const local = new LocalMergeQueueGit(repo.path, runner);
    const one = commit(repo.path, repo.main, { 'pr-1.txt': '1\n' }, 'PR 1, first');
    const heads = [
      { entryId: 'e1', number: 1, headSha: commit(repo.path, one, { 'pr-1.txt': '1, again\n' }, 'PR 1, second'), title: 'One' },
      { entryId: 'e2', number: 2, headSha: commit(repo.path, repo.main, { 'pr-2.txt': '2\n' }, 'PR 2'), title: null },
    ];
    const first = await local.buildCandidate(repo.main, heads, 'refs/heads/mq/q/b1', { method });
    const second = await local.buildCandidate(repo.main, heads, 'refs/heads/mq/q/b1', { method });
    expect(first).toEqual(second);
    if (!first.ok) throw new Error('expected a candidate');
    expect(first.landed.map((l) => [l.entryId, l.commits.length])).toEqual(
      method === 'squash'
        ? [
            ['e1', 1],
            ['e2', 1],
          ]
        : [
            ['e1', 2],
            ['e2', 1],
          ],
    );
    expect(first.landed[1].commits.at(-1)).toBe(first.candidateSha);
    expect(git(repo.path, 'log', '--format=%s', `${repo.main}..${first.candidateSha}`).split('\n')).toEqual(
      method === 'squash' ? ['PR 2 (#2)', 'One (#1)'] : ['PR 2', 'PR 1, second', 'PR 1, first'],
    );
    expect(readFile(repo.path, first.candidateSha, 'pr-1.txt')).toBe('1, again\n');
  });

  it('names the PR that conflicts, what it conflicts with, and the paths', async () => {
    const repo = createBareRepo({ 'shared.txt': 'one\n' });
    const local = new LocalMergeQueueGit(repo.path, runner);
    const a = commit(repo.path, repo.main, { 'shared.txt': 'one by 7\n' }, 'PR 7');
    const b = commit(repo.path, repo.main, { 'shared.txt': 'one by 8\n' }, 'PR 8');
    const result = await local.buildCandidate(
      repo.main,
      [
        { entryId: 'e7', number: 7, headSha: a },
        { entryId: 'e8', number: 8, headSha: b },
      ],
      'refs/heads/mq/q/b1',
    );
    expect(result).toEqual({ ok: false, conflictEntryId: 'e8', reason: '#8 conflicts with #7 in shared.txt', paths: ['shared.txt'] });
  });

  it('names the first PR whose head is not a commit of the repository', async () => {
    const repo = createBareRepo({ 'a.txt': 'a\n' });
    const good = commit(repo.path, repo.main, { 'pr-1.txt': '1\n' }, 'PR 1');
    const blob = git(repo.path, 'rev-parse', `${repo.main}:a.txt`);
    const heads = [
      { entryId: 'e1', number: 1, headSha: good },
      { entryId: 'e2', number: 2, headSha: blob },
      { entryId: 'e3', number: 3, headSha: 'f'.repeat(40) },
    ];
    const local = new LocalMergeQueueGit(repo.path, runner);
    expect(await local.buildCandidate(repo.main, heads)).toEqual({
      ok: false,
      conflictEntryId: 'e2',
      reason: `#2 head ${blob} is not in the repository`,
      paths: [],
    });
    expect(await local.buildCandidate(repo.main, [heads[0], heads[2]])).toMatchObject({ ok: false, conflictEntryId: 'e3' });
    expect(await local.buildCandidate(repo.main, [heads[0], { entryId: 'e4', number: 4, headSha: 'not-a-sha' }])).toMatchObject({
      ok: false,
      conflictEntryId: 'e4',
    });
  });

  it('publishes, reads and deletes refs (a missing one is fine)', async () => {
    const repo = createBareRepo();
    const local = new LocalMergeQueueGit(repo.path, runner);
    const next = commit(repo.path, repo.main, { 'b.txt': 'b\n' }, 'next');
    await local.publishRef('refs/heads/mq/q/b1', next);
    expect(await local.readRef('refs/heads/mq/q/b1')).toBe(next);
    await local.deleteRef('refs/heads/mq/q/b1');
    expect(await local.readRef('refs/heads/mq/q/b1')).toBeNull();
    await local.deleteRef('refs/heads/missing');
    expect(await local.readRef('refs/heads/missing')).toBeNull();
  });

  it('lands only while the fence is where the land read it: a fence moved since refuses the land even with the base still at the expected commit', async () => {
    const repo = createBareRepo();
    const local = new LocalMergeQueueGit(repo.path, runner);
    const fenceRef = 'refs/heads/mq-fence/q1';
    const next = commit(repo.path, repo.main, { 'b.txt': 'b\n' }, 'next');
    // Created once; asked again, it stays.
    const first = await local.moveFence(fenceRef, 'main', true);
    expect(await local.moveFence(fenceRef, 'main', true)).toBe(first);
    expect(git(repo.path, 'log', '-1', '--format=%P', first)).toBe('');
    // A newer executor moves it (before reading back): a late land under the old fence is refused.
    const moved = await local.moveFence(fenceRef, 'main');
    expect(moved).not.toBe(first);
    expect(await local.land('main', next, repo.main, { ref: fenceRef, sha: first })).toBe(false);
    expect(git(repo.path, 'rev-parse', 'main')).toBe(repo.main);
    // Base elsewhere: refused too, and the fence is left as it was.
    expect(await local.land('main', next, next, { ref: fenceRef, sha: moved })).toBe(false);
    expect(await local.land('main', next, repo.main, { ref: fenceRef, sha: moved })).toBe(true);
    expect(git(repo.path, 'rev-parse', 'main')).toBe(next);
    expect(git(repo.path, 'rev-parse', fenceRef)).toBe(moved);
  });
});
