import { eventTimeOf, REDELIVERY_MARGIN_MS, REDELIVERY_WINDOW_MS, routingOf, staleness, storedPayload } from './github-delivery';

const DAY = 86_400_000;

describe('github-delivery', () => {
  it('routes by installation id and repository id (numbers or digit strings), and keeps the name only as the name', () => {
    expect(
      routingOf({ installation: { id: 42 }, repository: { id: 1296269, full_name: 'octo/renamed', html_url: 'https://github.com/octo/renamed' } }),
    ).toEqual({ installationId: '42', repositoryId: '1296269', repositoryName: 'octo/renamed', repositoryUrl: 'https://github.com/octo/renamed' });
    expect(routingOf({ repository: { id: 0, full_name: 'a/b', html_url: 'javascript:x' } })).toEqual({ repositoryName: 'a/b' });
    expect(routingOf({ installation: { id: 1.5 }, repository: { id: '12a' } })).toEqual({});
    expect(routingOf(null)).toEqual({});
  });

  it("reads each acted-on event's own timestamp (ISO or epoch seconds); none for other events", () => {
    const at = '2026-11-20T10:00:00Z';
    const ms = Date.parse(at);
    expect(eventTimeOf('pull_request', { pull_request: { updated_at: at } })).toBe(ms);
    expect(eventTimeOf('check_run', { check_run: { completed_at: at, started_at: '2026-11-01T00:00:00Z' } })).toBe(ms);
    expect(eventTimeOf('check_suite', { check_suite: { updated_at: at } })).toBe(ms);
    expect(eventTimeOf('status', { updated_at: at })).toBe(ms);
    expect(eventTimeOf('push', { repository: { pushed_at: ms / 1000 } })).toBe(ms);
    expect(eventTimeOf('installation', { installation: { updated_at: '2026-11-01T00:00:00Z', suspended_at: at } })).toBe(ms);
    expect(eventTimeOf('branch_protection_rule', { rule: { updated_at: at } })).toBe(ms);
    expect(eventTimeOf('repository_ruleset', { repository_ruleset: { updated_at: at } })).toBe(ms);
    expect(eventTimeOf('ping', { hook: { updated_at: at } })).toBeUndefined();
    expect(eventTimeOf('pull_request', { pull_request: { updated_at: 'yesterday' } })).toBeUndefined();
  });

  it('refuses what is older than the redelivery window (3 days on github.com, 7 on Enterprise Server) plus the margin', () => {
    const now = Date.parse('2026-11-29T00:00:00Z');
    const pr = (age: number) => ({ pull_request: { updated_at: new Date(now - age).toISOString() } });
    expect(staleness('pull_request', pr(3 * DAY), 'GITHUB', now)).toBeUndefined();
    expect(staleness('pull_request', pr(3 * DAY + REDELIVERY_MARGIN_MS + 1000), 'GITHUB', now)).toMatchObject({
      maxAgeMs: REDELIVERY_WINDOW_MS.GITHUB + REDELIVERY_MARGIN_MS,
    });
    expect(staleness('pull_request', pr(5 * DAY), 'GITHUB_ENTERPRISE', now)).toBeUndefined();
    expect(staleness('pull_request', pr(8 * DAY), 'GITHUB_ENTERPRISE', now)).toBeDefined();
    // No timestamp: never one of GitHub's deliveries, so never a captured one.
    expect(staleness('pull_request', { pull_request: {} }, 'GITHUB', now)).toBeUndefined();
  });

  it('stores what the worker reads: a 2,000-commit push keeps its refs and the count, not the commits; repositories and accounts as their ids and names', () => {
    const commit = (i: number) => ({
      id: i.toString(16).padStart(40, '0'),
      message: `commit ${i}\n\n${'x'.repeat(400)}`,
      author: { name: 'A', email: 'a@example.com', username: 'a' },
      added: [`src/file-${i}.ts`],
      removed: [],
      modified: ['README.md'],
    });
    const payload = {
      ref: 'refs/heads/main',
      before: 'a'.repeat(40),
      after: 'b'.repeat(40),
      commits: Array.from({ length: 2000 }, (_, i) => commit(i)),
      head_commit: { ...commit(1999), timestamp: '2026-11-29T00:00:00Z' },
      repository: { id: 7, full_name: 'o/r', name: 'r', owner: { login: 'o', id: 1, avatar_url: 'https://x' }, description: 'd', pushed_at: 1, topics: ['a'] },
      sender: { login: 's', id: 2, avatar_url: 'https://x', site_admin: false },
      installation: { id: 9, node_id: 'x' },
    };
    const stored = storedPayload('push', payload);
    expect(stored).toEqual({
      ref: 'refs/heads/main',
      before: 'a'.repeat(40),
      after: 'b'.repeat(40),
      head_commit: { id: commit(1999).id, timestamp: '2026-11-29T00:00:00Z' },
      commit_count: 2000,
      repository: { id: 7, full_name: 'o/r', name: 'r', owner: { id: 1, login: 'o' }, pushed_at: 1 },
      sender: { id: 2, login: 's' },
      installation: { id: 9, node_id: 'x' },
    });
    expect(JSON.stringify(payload).length).toBeGreaterThan(1_000_000);
    expect(JSON.stringify(stored).length).toBeLessThan(1_000);
  });

  it("keeps the PR and check fields the queue acts on, without bodies, output (but a check run's title and annotations' count) and long strings", () => {
    const stored = storedPayload('check_run', {
      action: 'completed',
      check_run: {
        name: 'ci',
        head_sha: 'c'.repeat(40),
        conclusion: 'success',
        details_url: 'https://ci/1',
        output: { title: 't', summary: 'huge', text: 'huge too', annotations_count: 2, annotations_url: 'u' },
        app: { id: 15368, slug: 'github-actions', owner: { login: 'github', id: 9919, url: 'u' } },
        pull_requests: [{ number: 1 }],
        long: 'y'.repeat(5000),
      },
    });
    expect(stored).toEqual({
      action: 'completed',
      check_run: {
        name: 'ci',
        head_sha: 'c'.repeat(40),
        conclusion: 'success',
        details_url: 'https://ci/1',
        output: { title: 't', annotations_count: 2 },
        app: { id: 15368, slug: 'github-actions', owner: { id: 9919, login: 'github' } },
      },
    });
    const pr = storedPayload('pull_request', {
      action: 'synchronize',
      number: 3,
      pull_request: { number: 3, body: 'z'.repeat(60_000), head: { sha: 'd'.repeat(40), repo: { id: 5, full_name: 'f/r', forks: 3 } }, base: { ref: 'main' } },
    });
    expect(pr).toEqual({
      action: 'synchronize',
      number: 3,
      pull_request: { number: 3, head: { sha: 'd'.repeat(40), repo: { id: 5, full_name: 'f/r' } }, base: { ref: 'main' } },
    });
  });
});
