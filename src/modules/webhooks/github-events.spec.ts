import examples from '@octokit/webhooks-examples';
import { storedPayload } from './github-delivery';
import { commandOf, parseGithubEvent } from './github-events';

describe(parseGithubEvent.name, () => {
  const repository = { full_name: 'acme/api' };
  const sha = 'a'.repeat(40);

  it('reads a new head and a closed PR', () => {
    expect(parseGithubEvent('pull_request', { action: 'synchronize', number: 7, pull_request: { head: { sha }, base: { ref: 'main' } }, repository })).toEqual({
      kind: 'prHead',
      repository: 'acme/api',
      number: 7,
      headSha: sha,
      baseRef: 'main',
    });
    expect(
      parseGithubEvent('pull_request', { action: 'closed', number: 7, pull_request: { merged: true, head: { sha }, base: { ref: 'main' } }, repository }),
    ).toEqual({ kind: 'prClosed', repository: 'acme/api', number: 7, baseRef: 'main' });
    expect(parseGithubEvent('pull_request', { action: 'labeled', number: 7, pull_request: { base: { ref: 'main' } }, repository }).kind).toBe('ignored');
  });

  it('reads an edited title (changes.title), and ignores an edit that left the title alone', () => {
    const edited = (changes: object) =>
      parseGithubEvent('pull_request', { action: 'edited', number: 7, changes, pull_request: { title: 'Fix the widget', base: { ref: 'main' } }, repository });
    expect(edited({ title: { from: 'WIP' } })).toEqual({ kind: 'prTitle', repository: 'acme/api', number: 7, title: 'Fix the widget', baseRef: 'main' });
    expect(edited({ body: { from: 'old' } })).toEqual({ kind: 'ignored', reason: 'pull_request edited without a title change' });
    expect(
      parseGithubEvent('pull_request', {
        action: 'edited',
        number: 7,
        changes: { title: { from: 'x' } },
        pull_request: { title: '', base: { ref: 'main' } },
        repository,
      }).kind,
    ).toBe('ignored');
  });

  it("a failing check run names where its failing tests may be read (its id, its annotations' count, its output's title); a passing one does not", () => {
    const run = (conclusion: string, output?: Record<string, unknown>) =>
      parseGithubEvent('check_run', {
        action: 'completed',
        check_run: { id: 42, name: 'ci', head_sha: sha, conclusion, ...(output && { output }) },
        repository,
      });
    expect(run('failure', { title: '2 tests failed', annotations_count: 2 })).toMatchObject({
      state: 'failure',
      checkRun: { id: 42, annotations: 2, title: '2 tests failed' },
    });
    expect(run('timed_out')).toMatchObject({ state: 'failure', checkRun: { id: 42, annotations: 0 } });
    expect(run('success', { title: 'ok', annotations_count: 3 })).not.toHaveProperty('checkRun');
    expect(
      parseGithubEvent('check_run', { action: 'completed', check_run: { id: 'x', name: 'ci', head_sha: sha, conclusion: 'failure' }, repository }),
    ).not.toHaveProperty('checkRun');
  });

  it('reads check results: neutral and skipped pass as GitHub counts them, the rest fail; pending is no result', () => {
    const run = (conclusion: string) =>
      parseGithubEvent('check_run', {
        action: 'completed',
        check_run: { name: 'ci', head_sha: sha, conclusion, details_url: 'https://ci.example/1' },
        repository,
      });
    expect(run('success')).toEqual({
      kind: 'check',
      repository: 'acme/api',
      sha,
      name: 'ci',
      state: 'success',
      url: 'https://ci.example/1',
      source: { kind: 'checkRun' },
    });
    expect(['neutral', 'skipped'].map((c) => (run(c) as { state: string }).state)).toEqual(['success', 'success']);
    expect(['failure', 'cancelled', 'timed_out', 'action_required', 'stale'].map((c) => (run(c) as { state: string }).state)).toEqual(Array(5).fill('failure'));
    expect(parseGithubEvent('check_run', { action: 'created', check_run: { name: 'ci', head_sha: sha }, repository }).kind).toBe('ignored');
    expect(parseGithubEvent('status', { sha, context: 'ci', state: 'pending', repository }).kind).toBe('ignored');
    expect(parseGithubEvent('status', { sha, context: 'ci', state: 'error', repository })).toMatchObject({ kind: 'check', state: 'failure' });
    expect(
      parseGithubEvent('check_suite', { action: 'completed', check_suite: { head_sha: sha, conclusion: 'success', app: { slug: 'buildkite' } }, repository }),
    ).toMatchObject({ kind: 'check', name: 'buildkite', state: 'success' });
  });

  it('a check carries its source: a check run or suite with its app (GitHub’s own example payloads), or a commit status; skipped and neutral are marked', () => {
    type Payload = Record<string, unknown> & { action?: string; context?: string; check_run: Record<string, unknown>; check_suite: Record<string, unknown> };
    const of = (event: string) => (examples.find((e) => e.name === event)?.examples ?? []) as unknown as Payload[];
    const completedRun = of('check_run').find((p) => p.action === 'completed' && p.check_run.conclusion === 'failure');
    const app = completedRun?.check_run.app as { id: number; slug: string };
    expect(parseGithubEvent('check_run', completedRun)).toMatchObject({
      kind: 'check',
      state: 'failure',
      source: { kind: 'checkRun', appId: String(app.id), appSlug: app.slug },
    });
    expect(parseGithubEvent('check_run', completedRun)).not.toHaveProperty('skipped');
    const suite = of('check_suite').find((p) => p.action === 'completed' && (p.check_suite.app as { slug?: string }).slug);
    expect(parseGithubEvent('check_suite', suite)).toMatchObject({
      kind: 'check',
      source: { kind: 'checkSuite', appSlug: (suite?.check_suite.app as { slug: string }).slug },
    });
    const status = of('status')[0];
    expect(parseGithubEvent('status', status)).toMatchObject({ kind: 'check', name: status.context, source: { kind: 'status' } });
    for (const conclusion of ['skipped', 'neutral'])
      expect(
        parseGithubEvent('check_run', {
          action: 'completed',
          check_run: { name: 'ci', head_sha: sha, conclusion, app: { id: 7, slug: 'ci-app' } },
          repository,
        }),
      ).toMatchObject({ state: 'success', skipped: true, source: { kind: 'checkRun', appId: '7', appSlug: 'ci-app' } });
    // An app id that is no positive integer is not taken.
    expect(
      parseGithubEvent('check_run', {
        action: 'completed',
        check_run: { name: 'ci', head_sha: sha, conclusion: 'success', app: { id: '7', slug: '' } },
        repository,
      }),
    ).toMatchObject({ source: { kind: 'checkRun' } });
  });

  it('refuses what is not a commit sha or a link, and ignores branch deletions and unknown events', () => {
    expect(parseGithubEvent('status', { sha: 'main', context: 'ci', state: 'success', repository }).kind).toBe('ignored');
    expect(
      parseGithubEvent('check_run', {
        action: 'completed',
        check_run: { name: 'ci', head_sha: sha, conclusion: 'success', details_url: 'javascript:alert(1)' },
        repository,
      }),
    ).not.toHaveProperty('url');
    expect(parseGithubEvent('push', { ref: 'refs/heads/main', after: '0'.repeat(40), deleted: true, repository }).kind).toBe('ignored');
    expect(parseGithubEvent('push', { ref: 'refs/tags/v1', after: sha, repository }).kind).toBe('ignored');
    expect(parseGithubEvent('push', { ref: 'refs/heads/main', after: sha, repository })).toEqual({
      kind: 'push',
      repository: 'acme/api',
      branch: 'main',
      after: sha,
    });
    expect(parseGithubEvent('issues', { action: 'opened', repository })).toEqual({ kind: 'ignored', reason: 'event issues is not acted on' });
    expect(parseGithubEvent('pull_request', null).kind).toBe('ignored');
  });

  it('reads installation removals', () => {
    expect(parseGithubEvent('installation', { action: 'deleted', installation: { id: 12 } })).toMatchObject({ kind: 'installationGone', installationId: '12' });
    expect(parseGithubEvent('installation', { action: 'suspend', installation: { id: 12 } })).toMatchObject({
      kind: 'installationSuspended',
      installationId: '12',
    });
    expect(parseGithubEvent('installation', { action: 'unsuspend', installation: { id: 12 } }).kind).toBe('ignored');
  });

  it('reads changes of branch protection and rulesets (GitHub’s branch_protection_rule examples) as a change of the required checks', () => {
    const protection = examples.find((e) => e.name === 'branch_protection_rule')?.examples ?? [];
    expect(protection.length).toBeGreaterThan(0);
    for (const payload of protection) {
      const action = (payload as { action: string }).action;
      expect(parseGithubEvent('branch_protection_rule', payload)).toEqual({
        kind: 'requiredChecksChanged',
        repository: (payload as { repository: { full_name: string } }).repository.full_name,
        reason: `branch protection rule ${(payload as { rule: { name: string } }).rule.name} ${action}`,
      });
    }
    expect(parseGithubEvent('repository_ruleset', { action: 'edited', repository_ruleset: { id: 42 }, repository })).toEqual({
      kind: 'requiredChecksChanged',
      repository: 'acme/api',
      reason: 'ruleset 42 edited',
    });
    // An organization's ruleset names no repository.
    expect(parseGithubEvent('repository_ruleset', { action: 'deleted', repository_ruleset: { id: 7 } })).toEqual({
      kind: 'requiredChecksChanged',
      reason: 'ruleset 7 deleted',
    });
    expect(parseGithubEvent('branch_protection_configuration', { action: 'disabled', repository })).toMatchObject({ kind: 'requiredChecksChanged' });
    expect(parseGithubEvent('branch_protection_rule', { action: 'edited', rule: { name: 'main' } }).kind).toBe('ignored');
    expect(parseGithubEvent('repository_ruleset', { action: 'archived', repository_ruleset: { id: 1 }, repository }).kind).toBe('ignored');
  });

  describe('enqueue from the pull request (GitHub’s own example payloads)', () => {
    type Payload = Record<string, any>;
    const first = (event: string, action: string) =>
      structuredClone((examples.find((e) => e.name === event)?.examples ?? []).find((x) => (x as Payload).action === action)) as unknown as Payload;

    it('reads a label added or removed, with who did it', () => {
      for (const action of ['labeled', 'unlabeled']) {
        const payload = first('pull_request', action);
        expect(parseGithubEvent('pull_request', payload)).toEqual({
          kind: 'prLabel',
          repository: payload.repository.full_name,
          number: payload.number,
          baseRef: payload.pull_request.base.ref,
          label: payload.label.name,
          added: action === 'labeled',
          actor: { login: payload.sender.login, id: String(payload.sender.id) },
        });
      }
      const noLabel = first('pull_request', 'labeled');
      delete noLabel.label;
      expect(parseGithubEvent('pull_request', noLabel).kind).toBe('ignored');
    });

    it('reads /queue and /dequeue comments on a PR (first line, trimmed), from the stored part of the delivery too', () => {
      const payload = first('issue_comment', 'created');
      // GitHub's example is a comment on an issue: the same comment on a PR carries issue.pull_request.
      expect(parseGithubEvent('issue_comment', payload)).toEqual({ kind: 'ignored', reason: 'a comment on an issue, not a pull request' });
      payload.issue.pull_request = { url: 'https://api.github.com/repos/o/r/pulls/1', html_url: 'https://github.com/o/r/pull/1' };
      expect(parseGithubEvent('issue_comment', payload)).toEqual({ kind: 'ignored', reason: 'a comment that is no command' });
      payload.comment.body = '  /queue  \r\nplease, it is approved';
      const expected = {
        kind: 'prCommand',
        repository: payload.repository.full_name,
        number: payload.issue.number,
        command: 'queue',
        commentId: payload.comment.id,
        actor: { login: payload.comment.user.login, id: String(payload.comment.user.id) },
      };
      expect(parseGithubEvent('issue_comment', payload)).toEqual(expected);
      // What the worker reads is the stored part: the first line of the comment is kept.
      expect(parseGithubEvent('issue_comment', storedPayload('issue_comment', payload))).toEqual(expected);
      payload.comment.body = '/dequeue';
      expect(parseGithubEvent('issue_comment', payload)).toMatchObject({ kind: 'prCommand', command: 'dequeue' });
      expect(parseGithubEvent('issue_comment', { ...payload, action: 'edited' }).kind).toBe('ignored');
    });

    it('ignores comments by bots and apps (the queue’s own answers never start another)', () => {
      const payload = first('issue_comment', 'created');
      payload.issue.pull_request = { url: 'https://api.github.com/repos/o/r/pulls/1' };
      payload.comment.body = '/queue';
      expect(parseGithubEvent('issue_comment', { ...payload, comment: { ...payload.comment, user: { ...payload.comment.user, type: 'Bot' } } })).toMatchObject({
        kind: 'ignored',
        reason: 'a comment by a bot or an app (the queue answers none)',
      });
      expect(parseGithubEvent('issue_comment', { ...payload, comment: { ...payload.comment, performed_via_github_app: { id: 1, slug: 'x' } } }).kind).toBe(
        'ignored',
      );
    });

    it('takes a command only when the first line is exactly the command', () => {
      expect(['/queue', ' /queue ', '/queue\nmore', '\t/dequeue\r\n'].map(commandOf)).toEqual(['queue', 'queue', 'queue', 'dequeue']);
      expect(['/queue now', 'please /queue', '/Queue', '', '\n/queue', '/queue-it'].map(commandOf)).toEqual(Array(6).fill(undefined));
      expect(commandOf(undefined)).toBeUndefined();
    });
  });
});
