import type { Octokit } from '@octokit/rest';
import { GitProviderEmulator } from '@tools/git-emulator/emulator';
import { commit, git, readFile } from '@test/support/git-repos';
import { ProviderFailure } from './git-provider.port';
import { GitHubClient } from './github.provider';
import { GitHubMergeQueueGit } from './github-merge-queue-git';

/** The real Octokit client on the emulator, whose repositories are real bare git repositories. */
// Each case runs a real HTTP emulator and several git processes per request: 5 s is too short
// when the suite shares 2 cores with the rest of the run (two cases timed out in CI once).
jest.setTimeout(30_000);

describe(GitHubMergeQueueGit.name, () => {
  let emulator: GitProviderEmulator;
  let api: Octokit;
  let outsider: Octokit;
  let seq = 0;

  beforeAll(async () => {
    emulator = await new GitProviderEmulator().start();
    api = new GitHubClient({ apiUrl: emulator.url, webUrl: emulator.url, fetch }, emulator.addUser('octo').token).api;
    outsider = new GitHubClient({ apiUrl: emulator.url, webUrl: emulator.url, fetch }, emulator.addUser('outsider').token).api;
  });

  afterAll(() => emulator.stop());

  afterEach(() => (emulator.knobs.gitFailures = 0));

  /** A repository of `octo` whose main holds `files`. */
  function repository(files: Record<string, string> = { 'README.md': 'hello\n' }) {
    const name = `repo-${++seq}`;
    const { path } = emulator.addRepository('octo', name);
    const main = commit(path, git(path, 'rev-parse', 'main'), files, 'initial');
    git(path, 'update-ref', 'refs/heads/main', main);
    return { path, main, name, at: { owner: 'octo', repo: name }, github: new GitHubMergeQueueGit(api, `octo/${name}`) };
  }

  const status = (call: Promise<unknown>) =>
    call.then(
      () => 200,
      (error: { status?: number; response?: { data?: { message?: string } } }) => `${error.status} ${error.response?.data?.message}`,
    );

  it('builds a candidate of merge commits onto the base, one per head in order, and leaves no scratch branch', async () => {
    const repo = repository();
    const heads = [1, 2].map((n) => ({ entryId: `e${n}`, number: n, headSha: commit(repo.path, repo.main, { [`pr-${n}.txt`]: `${n}\n` }, `PR ${n}`) }));
    const first = await repo.github.buildCandidate(repo.main, heads, 'refs/heads/mq/q1/b1');
    if (!first.ok) throw new Error(first.reason);
    expect(readFile(repo.path, first.candidateSha, 'pr-1.txt')).toBe('1\n');
    expect(readFile(repo.path, first.candidateSha, 'pr-2.txt')).toBe('2\n');
    expect(git(repo.path, 'log', '--first-parent', '--format=%P|%s', first.candidateSha).split('\n').slice(0, 2)).toEqual([
      `${git(repo.path, 'rev-parse', `${first.candidateSha}^1`)} ${heads[1].headSha}|Merge #2 (${heads[1].headSha.slice(0, 12)})`,
      `${repo.main} ${heads[0].headSha}|Merge #1 (${heads[0].headSha.slice(0, 12)})`,
    ]);
    expect(git(repo.path, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
    // A rebuild (after a crash) starts again from the base: the same content.
    const again = await repo.github.buildCandidate(repo.main, heads, 'refs/heads/mq/q1/b1');
    if (!again.ok) throw new Error(again.reason);
    expect(git(repo.path, 'rev-parse', `${again.candidateSha}^{tree}`)).toBe(git(repo.path, 'rev-parse', `${first.candidateSha}^{tree}`));
    expect(await repo.github.isAncestor(repo.main, first.candidateSha)).toBe(true);
    expect(await repo.github.isAncestor(first.candidateSha, repo.main)).toBe(false);
  });

  it('names the PR that conflicts and the earlier PR it conflicts with; GitHub gives no paths', async () => {
    const repo = repository({ 'shared.txt': 'one\n' });
    const a = commit(repo.path, repo.main, { 'shared.txt': 'one by 7\n' }, 'PR 7');
    const b = commit(repo.path, repo.main, { 'other.txt': 'by 8\n' }, 'PR 8');
    const c = commit(repo.path, repo.main, { 'shared.txt': 'one by 9\n' }, 'PR 9');
    const heads = [
      { entryId: 'e7', number: 7, headSha: a },
      { entryId: 'e8', number: 8, headSha: b },
      { entryId: 'e9', number: 9, headSha: c },
    ];
    expect(await repo.github.buildCandidate(repo.main, heads, 'refs/heads/mq/q1/b2')).toEqual({
      ok: false,
      conflictEntryId: 'e9',
      reason: '#9 conflicts with #7 (GitHub does not say in which paths)',
      paths: [],
    });
    const missing = 'f'.repeat(40);
    expect(await repo.github.buildCandidate(repo.main, [{ entryId: 'e1', number: 1, headSha: missing }], 'refs/heads/mq/q1/b3')).toMatchObject({
      ok: false,
      conflictEntryId: 'e1',
      reason: `#1 head ${missing} is not in the repository`,
    });
    expect(git(repo.path, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
  });

  it('publishes, reads and deletes refs', async () => {
    const repo = repository();
    const next = commit(repo.path, repo.main, { 'b.txt': 'b\n' }, 'next');
    const sideways = commit(repo.path, repo.main, { 'c.txt': 'c\n' }, 'sideways');
    await repo.github.publishRef('refs/heads/mq/q/b1', next);
    await repo.github.publishRef('refs/heads/mq/q/b1', sideways);
    expect(await repo.github.readRef('refs/heads/mq/q/b1')).toBe(sideways);
    expect(await repo.github.readRef('main')).toBe(repo.main);
    await repo.github.deleteRef('refs/heads/mq/q/b1');
    await repo.github.deleteRef('refs/heads/mq/q/b1');
    expect(await repo.github.readRef('refs/heads/mq/q/b1')).toBeNull();
    expect(await repo.github.hasCommit(sideways)).toBe(true);
    expect(await repo.github.hasCommit('e'.repeat(40))).toBe(false);
  });

  it('lands with GraphQL updateRefs only while the fence and the base are where the land expects them (atomically: a refusal moves neither)', async () => {
    const repo = repository();
    const graphqlCalls = () => emulator.requests.filter((r) => r.method === 'POST' && r.path === '/graphql').length;
    const before = graphqlCalls();
    const fenceRef = 'refs/heads/mq-fence/q1';
    const next = commit(repo.path, repo.main, { 'b.txt': 'b\n' }, 'next');
    const first = await repo.github.moveFence(fenceRef, 'main', true);
    expect(await repo.github.moveFence(fenceRef, 'main', true)).toBe(first);
    expect(git(repo.path, 'log', '-1', '--format=%P%x00%s', first)).toMatch(/^\0merge-queue fence [0-9a-f-]{36}$/);
    const moved = await repo.github.moveFence(fenceRef, 'main');
    expect(moved).not.toBe(first);
    // A late land under the old fence: refused although main is still at the expected commit.
    expect(await repo.github.land('main', next, repo.main, { ref: fenceRef, sha: first })).toBe(false);
    expect(git(repo.path, 'rev-parse', 'main')).toBe(repo.main);
    expect(await repo.github.land('main', next, next, { ref: fenceRef, sha: moved })).toBe(false);
    expect(await repo.github.land('main', next, repo.main, { ref: fenceRef, sha: moved })).toBe(true);
    expect(git(repo.path, 'rev-parse', 'main')).toBe(next);
    expect(git(repo.path, 'rev-parse', fenceRef)).toBe(moved);
    expect(graphqlCalls() - before).toBe(3);
  });

  it('a land GitHub refuses for another reason (no push access) is a ProviderFailure, not a moved base', async () => {
    const repo = repository();
    const fence = await repo.github.moveFence('refs/heads/mq-fence/q1', 'main', true);
    const next = commit(repo.path, repo.main, { 'b.txt': 'b\n' }, 'next');
    const stranger = new GitHubMergeQueueGit(outsider, `octo/${repo.name}`);
    await expect(stranger.land('main', next, repo.main, { ref: 'refs/heads/mq-fence/q1', sha: fence })).rejects.toMatchObject({
      constructor: ProviderFailure,
      kind: 'rejected',
    });
    expect(git(repo.path, 'rev-parse', 'main')).toBe(repo.main);
  });

  it('lets a transient provider failure propagate as a ProviderFailure, never as an answer', async () => {
    const repo = repository();
    emulator.knobs.gitFailures = 1;
    await expect(repo.github.readRef('main')).rejects.toMatchObject({ constructor: ProviderFailure, kind: 'unavailable' });
    const fence = { ref: 'refs/heads/mq-fence/q', sha: await repo.github.moveFence('refs/heads/mq-fence/q', 'main', true) };
    emulator.knobs.down = true;
    try {
      await expect(repo.github.land('refs/heads/main', repo.main, repo.main, fence)).rejects.toBeInstanceOf(ProviderFailure);
    } finally {
      emulator.knobs.down = false;
    }
    expect(await repo.github.readRef('main')).toBe(repo.main);
  });

  describe('the emulator answers as GitHub does', () => {
    it('refs: 404 for a missing one, 422 for an existing create, a non-fast-forward or a missing delete', async () => {
      const repo = repository();
      const side = commit(repo.path, repo.main, { 'x.txt': 'x\n' }, 'side');
      const behind = git(repo.path, 'rev-parse', 'main~1');
      expect((await api.rest.git.getRef({ ...repo.at, ref: 'heads/main' })).data).toMatchObject({
        ref: 'refs/heads/main',
        object: { sha: repo.main, type: 'commit' },
      });
      expect(await status(api.rest.git.getRef({ ...repo.at, ref: 'heads/nope' }))).toBe('404 Not Found');
      expect((await api.rest.git.createRef({ ...repo.at, ref: 'refs/heads/feature/a', sha: side })).status).toBe(201);
      expect(await status(api.rest.git.createRef({ ...repo.at, ref: 'refs/heads/feature/a', sha: side }))).toBe('422 Reference already exists');
      expect(await status(api.rest.git.createRef({ ...repo.at, ref: 'refs/heads/feature/b', sha: 'd'.repeat(40) }))).toBe('422 Object does not exist');
      expect(await status(api.rest.git.updateRef({ ...repo.at, ref: 'heads/main', sha: behind, force: false }))).toBe('422 Update is not a fast forward');
      expect(await status(api.rest.git.updateRef({ ...repo.at, ref: 'heads/main', sha: side }))).toBe(200);
      expect((await api.rest.git.updateRef({ ...repo.at, ref: 'heads/main', sha: behind, force: true })).data.object.sha).toBe(behind);
      expect((await api.rest.git.deleteRef({ ...repo.at, ref: 'heads/feature/a' })).status).toBe(204);
      expect(await status(api.rest.git.deleteRef({ ...repo.at, ref: 'heads/feature/a' }))).toBe('422 Reference does not exist');
      expect(await status(api.rest.git.updateRef({ ...repo.at, ref: 'heads/feature/a', sha: side, force: true }))).toBe('422 Reference does not exist');
      expect((await api.rest.git.getCommit({ ...repo.at, commit_sha: side })).data).toMatchObject({
        sha: side,
        message: 'side',
        parents: [{ sha: repo.main }],
      });
      expect(await status(api.rest.git.getCommit({ ...repo.at, commit_sha: 'd'.repeat(40) }))).toBe('404 Not Found');
      // Reading needs a visible repository; writing needs push access.
      expect(await status(outsider.rest.git.getRef({ ...repo.at, ref: 'heads/main' }))).toBe(200);
      expect(await status(outsider.rest.git.createRef({ ...repo.at, ref: 'refs/heads/intruder', sha: side }))).toBe(
        '403 Resource not accessible by personal access token',
      );
      expect(await status(api.rest.git.getRef({ owner: 'octo', repo: 'missing', ref: 'heads/main' }))).toBe('404 Not Found');
    });

    it('merges: 201 with the merge commit, 204 when nothing to merge, 409 on a conflict, 404 for a missing base or head', async () => {
      const repo = repository({ 'shared.txt': 'one\n' });
      const a = commit(repo.path, repo.main, { 'shared.txt': 'one by a\n' }, 'a');
      const b = commit(repo.path, repo.main, { 'shared.txt': 'one by b\n' }, 'b');
      const merged = await api.rest.repos.merge({ ...repo.at, base: 'main', head: a, commit_message: 'Merge a' });
      expect(merged.status).toBe(201);
      expect(merged.data).toMatchObject({ commit: { message: 'Merge a' }, parents: [{ sha: repo.main }, { sha: a }] });
      expect(git(repo.path, 'rev-parse', 'main')).toBe(merged.data.sha);
      expect((await api.rest.repos.merge({ ...repo.at, base: 'main', head: a })).status).toBe(204);
      expect(await status(api.rest.repos.merge({ ...repo.at, base: 'main', head: b }))).toBe('409 Merge conflict');
      expect(git(repo.path, 'rev-parse', 'main')).toBe(merged.data.sha);
      expect(await status(api.rest.repos.merge({ ...repo.at, base: 'nope', head: a }))).toBe('404 Base does not exist');
      expect(await status(api.rest.repos.merge({ ...repo.at, base: 'main', head: 'nope' }))).toBe('404 Head does not exist');
    });

    it('compare: ahead, behind, identical and diverged with their counts; 404 for an unknown commit', async () => {
      const repo = repository();
      const one = commit(repo.path, repo.main, { 'a.txt': 'a\n' }, 'one');
      const two = commit(repo.path, one, { 'b.txt': 'b\n' }, 'two');
      const side = commit(repo.path, repo.main, { 'c.txt': 'c\n' }, 'side');
      const compare = async (basehead: string) => {
        const { data } = await api.rest.repos.compareCommitsWithBasehead({ ...repo.at, basehead });
        return [data.status, data.ahead_by, data.behind_by];
      };
      expect(await compare(`${repo.main}...${two}`)).toEqual(['ahead', 2, 0]);
      expect(await compare(`${two}...main`)).toEqual(['behind', 0, 2]);
      expect(await compare(`main...${repo.main}`)).toEqual(['identical', 0, 0]);
      expect(await compare(`${two}...${side}`)).toEqual(['diverged', 1, 2]);
      expect(await status(api.rest.repos.compareCommitsWithBasehead({ ...repo.at, basehead: `main...${'d'.repeat(40)}` }))).toBe('404 Not Found');
    });
  });
});
