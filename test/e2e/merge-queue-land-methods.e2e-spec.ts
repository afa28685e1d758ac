import { execFileSync } from 'node:child_process';
import request from 'supertest';
import type { GitProviderEmulator } from '../support/git';
import { commit, createBareRepo, createLocalCodeSource, git, readFile } from '../support/git-repos';
import { eventually, sleep } from '../support/eventually';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import { finalEntries, type MqQueue } from '../support/merge-queue-client';

/** Each case runs several CI rounds through the worker on real git (and the emulator's REST API). */
const TEST_TIMEOUT_MS = 90_000;

const ADA = { name: 'Ada Lovelace', email: 'ada@example.com' };
const BO = { name: 'Bo Builder', email: 'bo@example.com' };
const CY = { name: 'Cy Coder', email: 'cy@example.com' };

/** A commit on `parent` with `files` changed, authored by `who` at `date` (git's raw `<seconds> +0000`). */
function commitAs(
  repo: string,
  parent: string,
  files: Record<string, string | null>,
  message: string,
  who: { name: string; email: string },
  date: number,
): string {
  const tree = git(repo, 'rev-parse', `${commit(repo, parent, files, 'scratch')}^{tree}`);
  return execFileSync('git', ['--git-dir', repo, 'commit-tree', tree, '-p', parent, '-F', '-'], {
    input: `${message}\n`,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_AUTHOR_DATE: `${date} +0000`,
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  }).trim();
}

/** The commits `from..to` on the first-parent line, oldest first: id, parents, author, author date (seconds) and full message. */
function landedCommits(repo: string, from: string, to: string) {
  const out = git(repo, 'log', '--reverse', '--first-parent', '--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%B%x1e', `${from}..${to}`);
  return out
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter(Boolean)
    .map((r) => {
      const [sha, parents, name, email, at, message] = r.split('\0');
      return { sha, parents: parents.split(' ').filter(Boolean), author: { name, email }, at: Number(at), message: message.replace(/\n+$/, '') };
    });
}

const tree = (repo: string, rev: string) => git(repo, 'rev-parse', `${rev}^{tree}`);

/** One provider under test: a queue on a new repository whose main holds `files`, with queue `settings`. */
type NewQueue = (
  files: Record<string, string>,
  settings: Record<string, unknown>,
) => Promise<{ path: string; main: string; queue: MqQueue; repository?: string }>;

/**
 * Squash and rebase land methods (issue 39, "Land methods") on LOCAL_GIT and on GitHub (the
 * emulator's REST API through Octokit), with the real worker: the candidate is built in the
 * method's shape, CI tests it, and the land fast-forwards the base to exactly that commit.
 */
describe('Merge queue land methods (squash, rebase) on LOCAL_GIT and GitHub, real worker', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;

  beforeAll(async () => {
    suite = await githubQueueSuite('land_methods');
    emulator = suite.emulator;
  }, 60_000);

  afterAll(() => suite?.close());

  const http = () => request(suite.app.getHttpServer());
  /** Settings for one batch of the three PRs enqueued while paused: landing in queue order is within one candidate. */
  const oneBatch = { flakyRetries: 0, minBatch: 3, maxBatch: 3, maxParallel: 1 };

  const providers: [string, NewQueue][] = [
    [
      'LOCAL_GIT',
      async (files, settings) => {
        const repo = createBareRepo(files);
        const source = await createLocalCodeSource(suite.prisma, suite.owner.organizationId, repo.path);
        return { ...repo, queue: await suite.mq.create(source.id, { checkTimeoutSeconds: 600, ...settings }) };
      },
    ],
    [
      'GitHub',
      async (files, settings) => {
        const { queue, path, main, repository } = await suite.newQueue({ files, settings });
        return { path, main, queue, repository };
      },
    ],
  ];

  /** Enqueues `prs` (number, head, title) while the queue is paused, so that they form one batch, and runs CI until every entry rests. */
  async function landAll(queue: MqQueue, path: string, prs: { number: number; head: string; title?: string }[]): Promise<MqQueue> {
    await http().post(`/merge-queues/${queue.id}/pause`).set(suite.owner.auth).expect(200);
    for (const pr of prs) await suite.mq.enqueue(queue.id, pr.number, pr.head, { title: pr.title });
    await http().post(`/merge-queues/${queue.id}/resume`).set(suite.owner.auth).expect(200);
    const q = await suite.mq.runCi(queue.id, path, (x) => x.entries.length === prs.length && finalEntries(x), { timeoutMs: 75_000 });
    await suite.mq.quiet(queue.id);
    return q;
  }

  /** The candidate CI tested last: the head of the landed batch with the most PRs ahead of it in the base. */
  function testedTip(q: MqQueue, main: string): string {
    const landed = q.batches.filter((b) => b.status === 'landed');
    expect(landed.length).toBeGreaterThan(0);
    for (const b of landed) expect(b.requiredChecks).toEqual([{ name: 'ci', state: 'success' }]);
    const tip = landed.find((b) => b.headSha === main);
    expect(tip).toBeDefined();
    return tip!.headSha as string;
  }

  describe.each(providers)('%s', (_provider, newQueue) => {
    it(
      'squash lands one commit per PR in queue order, with GitHub’s message and co-author trailers, and the tree CI tested',
      async () => {
        const { path, main: base, queue, repository } = await newQueue({ 'README.md': 'hello\n' }, { ...oneBatch, settings: { mergeMethod: 'squash' } });
        // PR 1: two commits by Ada and Bo, Bo's naming Cy as a co-author; PR 2: Bo alone; PR 3: no title, Cy alone.
        const a1 = commitAs(path, base, { 'pr-1.txt': 'draft\n' }, 'Start widgets', ADA, 1_700_000_100);
        const a2 = commitAs(path, a1, { 'pr-1.txt': 'widgets\n' }, `Finish widgets\n\nCo-authored-by: ${CY.name} <${CY.email}>`, BO, 1_700_000_200);
        const b1 = commitAs(path, base, { 'pr-2.txt': 'two\n' }, 'Add two', BO, 1_700_000_300);
        const c1 = commitAs(path, base, { 'pr-3.txt': 'three\n' }, 'Fix the thing\n\nBecause.', CY, 1_700_000_400);
        if (repository)
          for (const [n, head] of [
            [1, a2],
            [2, b1],
            [3, c1],
          ] as const)
            emulator.pull(repository, n, head);

        const q = await landAll(queue, path, [
          { number: 1, head: a2, title: 'Add widgets' },
          { number: 2, head: b1, title: 'Second change' },
          { number: 3, head: c1 },
        ]);
        expect(q.entries.map((e) => [e.number, e.status])).toEqual([
          [1, 'merged'],
          [2, 'merged'],
          [3, 'merged'],
        ]);
        // One batch of the three: queue order within a candidate.
        expect(q.batches.filter((b) => b.status === 'landed').map((b) => b.prNumbers)).toEqual([[1, 2, 3]]);
        const main = git(path, 'rev-parse', 'main');
        // The tested candidate is what landed: main IS it, so its tree is the tree CI tested.
        const tested = testedTip(q, main);
        expect(tree(path, main)).toBe(tree(path, tested));
        const landed = landedCommits(path, base, main);
        expect(landed.map((c) => c.parents)).toEqual([[base], [landed[0].sha], [landed[1].sha]]);
        expect(landed.map((c) => c.message)).toEqual([
          `Add widgets (#1)\n\nCo-authored-by: ${BO.name} <${BO.email}>\nCo-authored-by: ${CY.name} <${CY.email}>`,
          'Second change (#2)',
          'Fix the thing (#3)',
        ]);
        expect(landed.map((c) => c.author)).toEqual([ADA, BO, CY]);
        // Each squash holds exactly its PR's change on top of the one before.
        expect(readFile(path, landed[0].sha, 'pr-1.txt')).toBe('widgets\n');
        expect(readFile(path, landed[0].sha, 'pr-2.txt')).toBeNull();
        expect(readFile(path, landed[1].sha, 'pr-2.txt')).toBe('two\n');
        expect(readFile(path, landed[1].sha, 'pr-3.txt')).toBeNull();
        expect(git(path, 'ls-tree', '--name-only', main).split('\n').sort()).toEqual(['README.md', 'pr-1.txt', 'pr-2.txt', 'pr-3.txt']);
        if (repository) {
          // GitHub cannot see the squashes as the PRs' merges: the queue closes each, naming its commit.
          await eventually('the PRs closed with a note', async () =>
            [1, 2, 3].every((n) => emulator.pull(repository, n).state === 'closed' && emulator.pull(repository, n).comments.length === 1),
          );
          for (const [i, n] of [1, 2, 3].entries()) {
            expect(emulator.pull(repository, n).comments[0].body).toContain(`squashed into one commit ${landed[i].sha}.`);
          }
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'rebase replays each PR’s commits (same count, messages, authors and dates) in queue order, landing the tree CI tested',
      async () => {
        const { path, main: base, queue, repository } = await newQueue({ 'README.md': 'hello\n' }, { ...oneBatch, settings: { mergeMethod: 'rebase' } });
        const a1 = commitAs(path, base, { 'pr-1.txt': 'draft\n' }, 'Start widgets', ADA, 1_700_000_100);
        const a2 = commitAs(path, a1, { 'pr-1.txt': 'widgets\n' }, 'Finish widgets\n\nWith a body.', BO, 1_700_000_200);
        const b1 = commitAs(path, base, { 'pr-2.txt': 'two\n' }, 'Add two', CY, 1_700_000_300);
        const c1 = commitAs(path, base, { 'pr-3.txt': 'three\n' }, 'Add three', ADA, 1_700_000_400);
        const c2 = commitAs(path, c1, { 'README.md': 'hello, three\n' }, 'Mention three', BO, 1_700_000_500);
        if (repository)
          for (const [n, head] of [
            [1, a2],
            [2, b1],
            [3, c2],
          ] as const)
            emulator.pull(repository, n, head);

        const q = await landAll(queue, path, [
          { number: 1, head: a2, title: 'Widgets' },
          { number: 2, head: b1, title: 'Two' },
          { number: 3, head: c2, title: 'Three' },
        ]);
        expect(q.entries.every((e) => e.status === 'merged')).toBe(true);
        expect(q.batches.filter((b) => b.status === 'landed').map((b) => b.prNumbers)).toEqual([[1, 2, 3]]);
        const main = git(path, 'rev-parse', 'main');
        expect(tree(path, main)).toBe(tree(path, testedTip(q, main)));
        const landed = landedCommits(path, base, main);
        const originals = [a1, a2, b1, c1, c2].map((sha) => landedCommits(path, `${sha}^`, sha)[0]);
        // The PRs' five commits, replayed in queue order: new ids, one parent each, same authors, dates and messages.
        expect(landed).toHaveLength(5);
        expect(landed.map((c) => c.parents)).toEqual([[base], ...landed.slice(0, 4).map((c) => [c.sha])]);
        expect(landed.map(({ author, at, message }) => ({ author, at, message }))).toEqual(
          originals.map(({ author, at, message }) => ({ author, at, message })),
        );
        expect(landed.map((c) => c.sha).filter((sha) => [a1, a2, b1, c1, c2].includes(sha))).toEqual([]);
        expect(readFile(path, main, 'README.md')).toBe('hello, three\n');
        expect(git(path, 'ls-tree', '--name-only', main).split('\n').sort()).toEqual(['README.md', 'pr-1.txt', 'pr-2.txt', 'pr-3.txt']);
        if (repository) {
          await eventually('the PRs closed with a note', async () =>
            [1, 2, 3].every((n) => emulator.pull(repository, n).state === 'closed' && emulator.pull(repository, n).comments.length === 1),
          );
          expect(emulator.pull(repository, 1).comments[0].body).toContain(`rebased as 2 commits:\n\n- ${landed[0].sha}\n- ${landed[1].sha}.`);
          expect(emulator.pull(repository, 2).comments[0].body).toContain(`rebased as 1 commit ${landed[2].sha}.`);
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a rebase whose commit does not apply blocks that PR with the reason (though its whole change merges cleanly) and lands the others',
      async () => {
        const {
          path,
          main: base,
          queue,
        } = await newQueue({ 'README.md': 'hello\n', 'shared.txt': 'one\n' }, { ...oneBatch, settings: { mergeMethod: 'rebase' } });
        const x = commitAs(path, base, { 'shared.txt': 'changed by #1\n' }, 'Change shared', ADA, 1_700_000_100);
        // #2 changes shared.txt and changes it back: merged whole it touches nothing #1 touched; replayed, its first commit conflicts.
        const y1 = commitAs(path, base, { 'shared.txt': 'changed by #2\n' }, 'Try shared', BO, 1_700_000_200);
        const y2 = commitAs(path, y1, { 'shared.txt': 'one\n', 'pr-2.txt': 'two\n' }, 'Undo shared, add two', BO, 1_700_000_300);
        const z = commitAs(path, base, { 'pr-3.txt': 'three\n' }, 'Add three', CY, 1_700_000_400);
        const q = await landAll(queue, path, [
          { number: 1, head: x, title: 'One' },
          { number: 2, head: y2, title: 'Two' },
          { number: 3, head: z, title: 'Three' },
        ]);
        const byNumber = Object.fromEntries(q.entries.map((e) => [e.number, e]));
        expect(byNumber[1].status).toBe('merged');
        expect(byNumber[3].status).toBe('merged');
        expect(byNumber[2].status).toBe('blocked');
        expect(byNumber[2].block).toMatch(
          new RegExp(
            `^Merge conflict while building candidate b\\d+: #2 conflicts when rebased: its commit ${y1.slice(0, 12)} \\("Try shared"\\) does not apply`,
          ),
        );
        const main = git(path, 'rev-parse', 'main');
        expect(landedCommits(path, base, main).map((c) => c.message)).toEqual(['Change shared', 'Add three']);
        expect(readFile(path, main, 'pr-2.txt')).toBeNull();
      },
      TEST_TIMEOUT_MS,
    );
  });

  it(
    'the default method still lands merge commits on GitHub, and leaves the PRs to GitHub (not closed, no comment)',
    async () => {
      const { queue, path, main: base, repository } = await suite.newQueue();
      const head = commitAs(path, base, { 'pr-1.txt': 'one\n' }, 'Add one', ADA, 1_700_000_100);
      emulator.pull(repository, 1, head);
      const q = await landAll(queue, path, [{ number: 1, head, title: 'One' }]);
      expect(q.entries[0].status).toBe('merged');
      const main = git(path, 'rev-parse', 'main');
      expect(git(path, 'rev-list', '--parents', '-1', main).split(' ')).toEqual([main, base, head]);
      expect(git(path, 'log', '-1', '--format=%s', main)).toBe(`Merge #1 (${head.slice(0, 12)})`);
      // The close job ran and found a merge: nothing to do on the PR.
      await sleep(1000);
      expect(emulator.pull(repository, 1)).toMatchObject({ state: 'open', comments: [] });
    },
    TEST_TIMEOUT_MS,
  );
});
