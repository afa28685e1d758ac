/**
 * The emulator held to GitHub's published contract. The project's own GitHub clients (the real
 * Octokit and @octokit/auth-app inside them) are driven against the emulator, every raw exchange is
 * recorded, and each answer is validated against GitHub's descriptions:
 * - REST: status declared by the operation, body against the operation's response schema in
 *   `@octokit/openapi` (api.github.com), error bodies carrying `message` and `documentation_url`,
 *   and the `Link` header of paginated listings;
 * - GraphQL: every document the project sends validated against `@octokit/graphql-schema`, and the
 *   emulator's answer executed against it (data of the selection's shape, error `locations` on the
 *   field at the error's `path`);
 * - webhooks: every delivery the emulator sends, headers and payload, against
 *   `@octokit/openapi-webhooks` (the schema picked by event and action).
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execute, GraphQLError, Kind, parse, validate, type FieldNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { commit, git } from '@test/support/git-repos';
import { GitHubAppInstallations } from '@/modules/git-providers/github-app';
import { GitHubBranchRules } from '@/modules/git-providers/github-branch-rules';
import { GitHubClient } from '@/modules/git-providers/github.provider';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import { GitProviderEmulator } from './emulator';
import { describeErrors, graphqlSchema, RestDescription, WebhookDescription } from './github-contract';

jest.setTimeout(120_000);

interface Exchange {
  method: string;
  url: string;
  requestBody: string;
  status: number;
  headers: Headers;
  body: string;
}

/** Statuses GitHub sends for an operation without declaring them (each checked against `basic-error`), with why the project relies on it. */
const UNDECLARED: Record<string, number[]> = {
  // "Must have push access to view repository collaborators.": GitHubClient.repository counts 0 collaborators then.
  'repos/list-collaborators': [403],
};

/** Every REST operation the project's source calls (Octokit `rest.<scope>.<method>` and route strings), plus @octokit/auth-app's exchange. */
function restOperationsInSource(rest: RestDescription): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.spec.ts')) files.push(path);
    }
  };
  walk(join(__dirname, '..', '..', 'src'));
  const ids = new Set<string>(['apps/create-installation-access-token']);
  const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\.rest\.(\w+)\.(\w+)\b/g)) ids.add(`${kebab(m[1])}/${kebab(m[2])}`);
    for (const m of text.matchAll(/['`](GET|POST|PATCH|PUT|DELETE) (\/[^'`\s]*)['`]/g)) {
      const operation = rest.operation(m[1], m[2]);
      if (operation) ids.add(operation.operationId);
    }
  }
  return [...ids].sort();
}

/** Every GraphQL call site in the project's source (`.graphql(` or `.graphql<T>(`). */
function graphqlCallSites(): number {
  let count = 0;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.spec.ts')) count += (readFileSync(path, 'utf8').match(/\.graphql(<[^(]*>)?\(/g) ?? []).length;
    }
  };
  walk(join(__dirname, '..', '..', 'src'));
  return count;
}

describe('the git emulator against GitHub’s published descriptions', () => {
  let emulator: GitProviderEmulator;
  let rest: RestDescription;
  let webhooks: WebhookDescription;
  let schema: GraphQLSchema;
  let receiver: http.Server;
  const exchanges: Exchange[] = [];
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const secret = 'contract-webhook-secret';
  const appId = '424242';
  let installationId: number;

  /** A fetch that records every exchange raw (status, headers, body text) and hands the client an untouched copy. */
  const recordingFetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const requestBody = request.body ? await request.clone().text() : '';
    const response = await fetch(request);
    const body = await response.clone().text();
    exchanges.push({ method: request.method, url: request.url, requestBody, status: response.status, headers: response.headers, body });
    return response;
  };
  const endpoints = () => ({ apiUrl: emulator.url, webUrl: emulator.url, fetch: recordingFetch });

  beforeAll(async () => {
    rest = new RestDescription();
    webhooks = new WebhookDescription();
    schema = graphqlSchema();
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    emulator = await new GitProviderEmulator().start();
    const { publicKey } = keys;
    emulator.app = { appId, publicKey };
    installationId = emulator.addInstallation('octo', ['octo']).id;
    emulator.webhook = { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/github`, secret, installationId };
  });

  afterAll(async () => {
    await emulator.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });

  /** Waits until the emulator's deliveries (sent in the background after ref moves) have all arrived. */
  async function settled(): Promise<void> {
    let idle = 0;
    for (let i = 0; i < 400 && idle < 4; i++) {
      const before = emulator.deliveries.length;
      await new Promise((r) => setTimeout(r, 50));
      idle = emulator.deliveries.length === before && received.length >= emulator.deliveries.length ? idle + 1 : 0;
    }
  }

  /** Everything the project does with GitHub, success and the failures it relies on, through its own clients. */
  async function driveTheProject(): Promise<void> {
    const octo = emulator.addUser('octo').token;
    const dev = emulator.addUser('dev').token;
    const stranger = emulator.addUser('stranger').token;
    const repo = emulator.addRepository('octo', 'widgets', { description: 'Widgets', collaborators: ['octo', 'dev'] });
    emulator.addRepository('octo', 'secret', { private: true });
    emulator.addWorkflowRuns('octo', 'widgets', { count: 5, jobsPerRun: 3, seed: 7 });
    void dev;
    const base = commit(repo.path, git(repo.path, 'rev-parse', 'main'), { 'shared.txt': 'one\n', 'README.md': 'widgets\n' }, 'content');
    git(repo.path, 'update-ref', 'refs/heads/main', base);

    // GitHubClient: who the token is, a repository, installations, Actions usage.
    const client = new GitHubClient(endpoints(), octo);
    await client.currentAccount();
    await client.repository('octo/widgets', { accountLogin: 'octo' });
    await client.userInstallationIds();
    const { runs } = await client.ciUsage.workflowRunsPage('octo/widgets', 1, 2);
    await client.ciUsage.workflowRunJobsPage('octo/widgets', runs[0].id, 1, 2);
    await client.repository('octo/missing', {}).catch(() => undefined);
    // Without push access the collaborator count is 0 (403, relied on).
    await new GitHubClient(endpoints(), stranger).repository('octo/widgets', {});
    const revoked = emulator.issueToken('octo');
    emulator.revokeToken(revoked);
    await new GitHubClient(endpoints(), revoked).currentAccount().catch(() => undefined);

    // The app: an installation token (and a 404 for an installation that does not exist).
    const app = new GitHubAppInstallations(endpoints(), { appId, privateKey: keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() });
    await app.installationToken(String(installationId));
    await app.installationToken('999999999').catch(() => undefined);

    // Connecting an installation: the person's view of it, their organization membership (a 404 for
    // none), the repositories it covers as the person sees them and as the installation itself does.
    emulator.addOrgMember('acme', 'octo', { role: 'admin', state: 'active' });
    await client.installations.userInstallation(String(installationId));
    await client.installations.organizationMembership('acme');
    await client.installations.organizationMembership('nowhere');
    await client.installations.userInstallationRepositoryIds(String(installationId));
    const installationToken = await app.installationToken(String(installationId));
    await new GitHubClient(endpoints(), installationToken).installations.installationRepositoryIds();

    // The merge queue's git: statuses, refs, commits, candidates (merges, conflicts), fences, lands.
    const mq = new GitHubMergeQueueGit(client.api, 'octo/widgets');
    await mq.createCommitStatus(base, { state: 'pending', context: 'merge-queue/main', description: 'Queued', targetUrl: 'https://app.example.com/q/1' });
    await mq.readRef('main');
    await mq.readRef('missing');
    await mq.hasCommit(base);
    await mq.hasCommit('f'.repeat(40));
    const a = commit(repo.path, base, { 'shared.txt': 'one by a\n' }, 'PR 1');
    const b = commit(repo.path, base, { 'b.txt': 'b\n' }, 'PR 2');
    const c = commit(repo.path, base, { 'shared.txt': 'one by c\n' }, 'PR 3');
    const built = await mq.buildCandidate(
      base,
      [
        { entryId: 'e1', number: 1, headSha: a },
        { entryId: 'e2', number: 2, headSha: b },
      ],
      'refs/heads/mq/q/b1',
    );
    if (!built.ok) throw new Error(built.reason);
    // A head the branch already contains (204) and a conflict (409).
    await mq.buildCandidate(
      base,
      [
        { entryId: 'e1', number: 1, headSha: a },
        { entryId: 'e1b', number: 4, headSha: a },
        { entryId: 'e3', number: 3, headSha: c },
      ],
      'refs/heads/mq/q/b2',
    );
    // Squash and rebase candidates: compare's commit list, commits written with their authors (POST /git/commits), a replay that does not apply.
    const a2 = commit(repo.path, a, { 'a2.txt': 'a2\n' }, 'PR 1, second commit');
    const shaped = { entryId: 'e1', number: 1, headSha: a2, title: 'PR one' };
    const squashed = await mq.buildCandidate(base, [shaped], 'refs/heads/mq/q/b3', { method: 'squash' });
    const rebased = await mq.buildCandidate(base, [shaped], 'refs/heads/mq/q/b4', { method: 'rebase' });
    if (!squashed.ok || !rebased.ok) throw new Error('squash or rebase did not build');
    const undo = commit(repo.path, commit(repo.path, base, { 'shared.txt': 'tried by d\n' }, 'PR 5, try'), { 'shared.txt': 'one\n' }, 'PR 5, undo');
    const conflicted = await mq.buildCandidate(
      base,
      [
        { entryId: 'e1', number: 1, headSha: a },
        { entryId: 'e5', number: 5, headSha: undo },
      ],
      'refs/heads/mq/q/b5',
      { method: 'rebase' },
    );
    if (conflicted.ok) throw new Error('a replay that does not apply was built');
    // A PR landed as new commits: closed, with a comment naming them.
    await emulator.pullRequest('octo/widgets', 'opened', { number: 8, headSha: a2, baseRef: 'main' });
    await mq.closePullRequest(8);
    await mq.commentOnPullRequest(8, `Landed as ${squashed.candidateSha}.`);
    await mq.commentOnPullRequest(999, 'no such PR').catch(() => undefined);
    await mq.publishRef('refs/heads/mq/q/b1', built.candidateSha);
    const fence = await mq.moveFence('refs/heads/mq-fence/q', 'main');
    await mq.moveFence('refs/heads/mq-fence/q', 'main', true);
    await mq.isAncestor(base, built.candidateSha);
    await mq.changedPaths(base, built.candidateSha);
    await mq.changedPaths(base, 'e'.repeat(40));
    // A land refused (the base is not where it is expected), then one that lands.
    await mq.land('main', built.candidateSha, a, { ref: 'refs/heads/mq-fence/q', sha: fence }).catch(() => undefined);
    await mq.land('main', built.candidateSha, base, { ref: 'refs/heads/mq-fence/q', sha: fence });
    await mq.deleteRef('refs/heads/mq/q/b1');
    await mq.deleteRef('refs/heads/mq/q/b1');
    // A PR's review decision (GraphQL), and a PR that does not exist (GitHub's NOT_FOUND error entry).
    await emulator.pullRequest('octo/widgets', 'opened', { number: 7, headSha: a, baseRef: 'main' });
    emulator.review('octo/widgets', 7, 'dev', 'APPROVED');
    expect(await mq.reviewDecision(7)).toEqual({ decision: 'APPROVED', headSha: a });
    expect(await mq.reviewDecision(999)).toBeNull();

    // What GitHub requires on a branch (a queue with requiredChecksFrom: branchProtection): the
    // protection rule through the branch (read access), the rulesets' rules; each change a webhook.
    const rules = new GitHubBranchRules(client.api, 'octo/widgets');
    expect(await rules.requirements('main')).toEqual({ protection: null, rules: [] });
    await emulator.setBranchProtection('octo/widgets', 'main', [{ context: 'build' }]);
    await emulator.setBranchProtection('octo/widgets', 'main', [{ context: 'build', appId: 15368 }, { context: 'lint' }]);
    const { ruleset } = await emulator.setRuleset('octo/widgets', {
      name: 'checks',
      include: ['~DEFAULT_BRANCH'],
      checks: [{ context: 'e2e', integrationId: 42 }],
    });
    await emulator.setRuleset('octo/widgets', {
      id: ruleset.id,
      name: 'checks',
      include: ['refs/heads/main'],
      checks: [{ context: 'e2e', integrationId: 42 }, { context: 'docs' }],
    });
    expect(await rules.requirements('main')).toEqual({
      protection: {
        enforcement_level: 'non_admins',
        contexts: ['build', 'lint'],
        checks: [
          { context: 'build', app_id: 15368 },
          { context: 'lint', app_id: null },
        ],
      },
      rules: [
        {
          type: 'required_status_checks',
          parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: 'e2e', integration_id: 42 }, { context: 'docs' }] },
          ruleset_source_type: 'Repository',
          ruleset_source: 'octo/widgets',
          ruleset_id: ruleset.id,
        },
      ],
    });
    await expect(rules.requirements('no-such-branch')).rejects.toMatchObject({ kind: 'not_found' });
    await emulator.removeBranchProtection('octo/widgets', 'main');
    await emulator.deleteRuleset('octo/widgets', ruleset.id);
    expect(await rules.requirements('main')).toEqual({ protection: null, rules: [] });
    // A failing check run's annotations (the failing tests it names), read 50 a page: 51 failures and a notice over two pages.
    const annotations = Array.from({ length: 52 }, (_, i) => ({
      path: `test/t${i}.spec.ts`,
      start_line: i + 1,
      end_line: i + 1,
      annotation_level: i === 7 ? ('notice' as const) : ('failure' as const),
      message: `expected ${i}\nreceived something else`,
      ...(i % 2 === 0 && { title: `t${i} fails` }),
    }));
    await emulator.checkRun('octo/widgets', base, 'ci', { conclusion: 'failure', id: 990_001, annotations });
    const read = await mq.checkRunFailureAnnotations(990_001, 4);
    expect(read?.annotations).toHaveLength(51);
    expect(read?.annotations[0]).toEqual({ path: 'test/t0.spec.ts', title: 't0 fails', message: 'expected 0\nreceived something else' });
    expect(read?.more).toBe(false);
    // A PR's title (REST pulls.get), and a PR that does not exist (404).
    expect(await mq.pullRequestTitle(7)).toBe('Pull request #7');
    expect(await mq.pullRequestTitle(999)).toBeNull();
    // Enqueue from the pull request: the PR (and one that does not exist), a person's permission (and
    // someone GitHub does not know), a comment on the PR, a reaction to a comment (new: 201, again: 200).
    const prs = mq.pullRequests();
    emulator.setPullRequest('octo/widgets', 7, { title: 'Widgets get a handle' });
    expect(await prs.pull(7)).toMatchObject({ number: 7, title: 'Widgets get a handle', state: 'open', draft: false, baseRef: 'main', headSha: a });
    expect(await prs.pull(999)).toBeNull();
    emulator.setRole('octo/widgets', 'stranger', 'triage');
    expect(await prs.permission('dev')).toMatchObject({ permission: 'write', roleName: 'write', canWrite: true });
    expect(await prs.permission('stranger')).toMatchObject({ permission: 'read', roleName: 'triage', canWrite: false });
    expect(await prs.permission('nobody-here')).toMatchObject({ permission: 'none', canWrite: false });
    await prs.comment(7, '@dev: the merge queue did not queue this pull request.');
    const commentId = emulator.pullRequestOf('octo/widgets', 7)!.comments[0].id;
    await prs.react(commentId, 'rocket');
    await prs.react(commentId, 'rocket');
    // Labels, as a person adds and removes them on GitHub (the webhooks follow).
    await client.api.rest.issues.addLabels({ owner: 'octo', repo: 'widgets', issue_number: 7, labels: ['queue'] });
    await client.api.rest.issues.removeLabel({ owner: 'octo', repo: 'widgets', issue_number: 7, name: 'queue' });
    await client.api.rest.issues.removeLabel({ owner: 'octo', repo: 'widgets', issue_number: 7, name: 'queue' }).catch(() => undefined);
    await settled();
  }

  let driven: Promise<void> | undefined;
  const drive = () => (driven ??= driveTheProject());

  it('answers every REST operation the project calls as GitHub’s OpenAPI description says (status, body, errors, Link)', async () => {
    await drive();
    const covered = new Map<string, Set<number>>();
    const problems: string[] = [];
    for (const exchange of exchanges) {
      const path = new URL(exchange.url).pathname;
      if (path === '/graphql' || path.startsWith('/login/')) continue;
      const operation = rest.operation(exchange.method, path);
      const where = `${exchange.method} ${path} → ${exchange.status}`;
      if (!operation) {
        problems.push(`${where}: no operation in the description`);
        continue;
      }
      const statuses = covered.get(operation.operationId) ?? new Set<number>();
      statuses.add(exchange.status);
      covered.set(operation.operationId, statuses);
      const declared = rest.response(operation, exchange.status);
      const undeclaredOk = UNDECLARED[operation.operationId]?.includes(exchange.status);
      if (!declared && !undeclaredOk) problems.push(`${where}: ${operation.operationId} does not declare ${exchange.status}`);
      let body: unknown;
      if (exchange.body) {
        if (!/^application\/json/.test(exchange.headers.get('content-type') ?? '')) problems.push(`${where}: body is not application/json`);
        body = JSON.parse(exchange.body);
      } else if (exchange.status !== 204) problems.push(`${where}: no body`);
      const validator = declared ? rest.bodyValidator(operation, exchange.status) : null;
      if (validator && !validator(body)) problems.push(`${where}: ${operation.operationId} ${describeErrors(validator).join('; ')}`);
      if (exchange.status >= 400) {
        const basic = rest.schema('basic-error');
        if (!basic(body)) problems.push(`${where}: error body ${describeErrors(basic).join('; ')}`);
        const error = body as { message?: unknown; documentation_url?: unknown };
        if (typeof error.message !== 'string' || typeof error.documentation_url !== 'string')
          problems.push(`${where}: an error body carries message and documentation_url`);
      }
      // Paginated listings: a Link header (absolute URLs, rel="next" while there is more), as GitHub sends.
      const link = exchange.headers.get('link');
      if (declared?.headers && 'Link' in (declared.headers as object) && link) {
        for (const part of link.split(',')) {
          const match = part.trim().match(/^<([^>]+)>; rel="(next|last|first|prev)"$/);
          if (!match || !/^https?:\/\//.test(match[1]) || !new URL(match[1]).searchParams.get('page')) problems.push(`${where}: Link part ${part}`);
        }
      }
      for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
        if (!exchange.headers.get(header)) problems.push(`${where}: no ${header}`);
    }
    // Listings asked for a page of fewer items than they hold say so in Link: next, and the last page (5 runs by 2, 2 collaborators by 1, 3 jobs by 2).
    const lastPageOf = (fragment: string) => {
      const link = exchanges.find((e) => e.url.includes(fragment) && e.status === 200)?.headers.get('link') ?? '';
      return { next: /rel="next"/.test(link), last: Number(link.match(/<([^>]+)>; rel="last"/)?.[1].match(/[?&]page=(\d+)/)?.[1]) };
    };
    expect(lastPageOf('/actions/runs?page=1&per_page=2')).toEqual({ next: true, last: 3 });
    expect(lastPageOf('/collaborators?per_page=1')).toEqual({ next: true, last: 2 });
    expect(lastPageOf('/jobs?filter=all&page=1&per_page=2')).toEqual({ next: true, last: 2 });
    const inSource = restOperationsInSource(rest);
    const missing = inSource.filter((id) => !covered.has(id));
    const cases = [...covered.values()].reduce((n, s) => n + s.size, 0);
    console.log(
      `GitHub contract, REST: ${covered.size} operations, ${cases} status cases, ${exchanges.length} exchanges validated against @octokit/openapi (api.github.com)\n` +
        [...covered].map(([id, s]) => `  ${id}: ${[...s].sort().join(', ')}`).join('\n'),
    );
    expect(problems).toEqual([]);
    expect(missing).toEqual([]);
    // The error cases the project relies on were all met.
    const expected: [string, number][] = [
      ['users/get-authenticated', 401],
      ['repos/get', 404],
      ['repos/list-collaborators', 403],
      ['apps/create-installation-access-token', 404],
      ['git/get-ref', 404],
      ['git/get-commit', 404],
      ['git/create-ref', 422],
      ['git/update-ref', 422],
      ['git/delete-ref', 422],
      ['repos/compare-commits-with-basehead', 404],
      ['repos/merge', 204],
      ['repos/merge', 409],
      ['repos/get-branch', 404],
      ['pulls/get', 404],
      ['pulls/update', 200],
      ['issues/create-comment', 201],
      ['issues/create-comment', 404],
    ];
    expect(expected.filter(([id, status]) => !covered.get(id)?.has(status))).toEqual([]);
  });

  it('sends GraphQL documents valid against GitHub’s schema and answers them in its shape, error locations included', async () => {
    await drive();
    const posts = exchanges.filter((e) => new URL(e.url).pathname === '/graphql');
    const documents = new Set<string>();
    const problems: string[] = [];
    for (const post of posts) {
      const { query, variables } = JSON.parse(post.requestBody) as { query: string; variables?: Record<string, unknown> };
      documents.add(query);
      const document = parse(query);
      const invalid = validate(schema, document);
      if (invalid.length) problems.push(`document: ${invalid.map((e) => e.message).join('; ')}`);
      const answer = JSON.parse(post.body) as {
        data?: Record<string, unknown> | null;
        errors?: { message: string; path?: (string | number)[]; locations?: { line: number; column: number }[] }[];
      };
      // The answer's data, run through the schema as the root value: the selection's shape, variables coerced by the schema.
      const result = await execute({ schema, document, rootValue: answer.data ?? {}, variableValues: variables });
      const variableErrors = (result.errors ?? []).filter((e) => /Variable/.test(e.message));
      if (variableErrors.length) problems.push(`variables: ${variableErrors.map((e) => e.message).join('; ')}`);
      if (!answer.errors) {
        if (result.errors?.length) problems.push(`data: ${result.errors.map((e) => e.message).join('; ')}`);
        expect(result.data).toEqual(answer.data);
        continue;
      }
      const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      for (const error of answer.errors) {
        if (typeof error.message !== 'string') problems.push('an error without message');
        const field = error.path && operation ? fieldAt(operation.selectionSet, error.path) : undefined;
        if (!field) {
          problems.push(`error path ${JSON.stringify(error.path)} names no field of the document`);
          continue;
        }
        const expected = new GraphQLError('', { nodes: field }).locations;
        if (JSON.stringify(error.locations) !== JSON.stringify(expected))
          problems.push(`error locations ${JSON.stringify(error.locations)}, the field is at ${JSON.stringify(expected)}`);
      }
    }
    console.log(`GitHub contract, GraphQL: ${documents.size} documents (${posts.length} requests) validated against @octokit/graphql-schema`);
    expect(problems).toEqual([]);
    expect(posts.some((p) => (JSON.parse(p.body) as { errors?: unknown }).errors)).toBe(true);
    expect(documents.size).toBe(graphqlCallSites());
  });

  it('sends every webhook as GitHub’s webhook description says, headers included', async () => {
    await drive();
    // What the emulator sends on request, beside the pushes the API's ref moves sent above.
    const [owner, name] = ['octo', 'widgets'];
    const sha = git(emulator.addRepository(owner, 'hooks').path, 'rev-parse', 'main');
    await emulator.checkRunCompleted(`${owner}/${name}`, sha, 'ci/build', 'success');
    await emulator.checkRun(`${owner}/${name}`, sha, 'ci', { output: { title: 'Running', summary: 'The demo CI is testing this commit' } });
    await emulator.commitStatus(`${owner}/${name}`, sha, 'ci/lint', 'failure');
    await emulator.pullRequest(`${owner}/${name}`, 'opened', { number: 5, headSha: sha, baseRef: 'main' });
    await emulator.pullRequest(`${owner}/${name}`, 'synchronize', { number: 5, headSha: sha, baseRef: 'main' });
    await emulator.pullRequest(`${owner}/${name}`, 'edited', { number: 5, headSha: sha, baseRef: 'main', title: 'Fix the widget' });
    await emulator.pullRequest(`${owner}/${name}`, 'closed', { number: 5, headSha: sha, baseRef: 'main', merged: true });
    await emulator.push(`${owner}/${name}`, 'refs/heads/feature', '0'.repeat(40), sha, 'octo');
    await emulator.label(`${owner}/${name}`, 5, 'queue', 'dev');
    await emulator.label(`${owner}/${name}`, 5, 'queue', 'dev', 'unlabeled');
    await emulator.comment(`${owner}/${name}`, 5, 'dev', '/queue');
    // A repository webhook (no app): the hook belongs to the repository.
    emulator.webhook = { ...emulator.webhook!, installationId: undefined };
    await emulator.push(`${owner}/${name}`, 'refs/heads/feature', sha, '0'.repeat(40), 'octo');
    emulator.webhook = { ...emulator.webhook, installationId };
    await settled();

    const problems: string[] = [];
    const counts = new Map<string, number>();
    for (const delivery of received) {
      const header = (n: string) => {
        const v = delivery.headers[n.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      };
      const event = header('X-GitHub-Event') ?? '';
      const payload = JSON.parse(delivery.body) as Record<string, unknown>;
      const key = webhooks.key(event, payload.action);
      const where = `${key} ${header('X-GitHub-Delivery')}`;
      if (!webhooks.has(key)) {
        problems.push(`${where}: no such webhook in the description`);
        continue;
      }
      counts.set(key, (counts.get(key) ?? 0) + 1);
      for (const name of webhooks.requiredHeaders(key)) if (!header(name)) problems.push(`${where}: no ${name} header`);
      if (!/^GitHub-Hookshot\/[0-9a-f]+$/.test(header('User-Agent') ?? '')) problems.push(`${where}: User-Agent ${header('User-Agent')}`);
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(header('X-GitHub-Delivery') ?? '')) problems.push(`${where}: delivery id`);
      if (header('X-Hub-Signature-256') !== `sha256=${createHmac('sha256', secret).update(delivery.body).digest('hex')}`)
        problems.push(`${where}: X-Hub-Signature-256`);
      if (header('X-Hub-Signature') !== `sha1=${createHmac('sha1', secret).update(delivery.body).digest('hex')}`) problems.push(`${where}: X-Hub-Signature`);
      if (!/^\d+$/.test(header('X-GitHub-Hook-ID') ?? '')) problems.push(`${where}: X-GitHub-Hook-ID`);
      if (!/^application\/json/.test(header('content-type') ?? '')) problems.push(`${where}: content-type`);
      const installation = (payload.installation as { id?: number } | undefined)?.id;
      const target = installation !== undefined ? ['integration', appId] : ['repository', String((payload.repository as { id?: number }).id)];
      if (header('X-GitHub-Hook-Installation-Target-Type') !== target[0] || header('X-GitHub-Hook-Installation-Target-ID') !== target[1])
        problems.push(
          `${where}: target ${header('X-GitHub-Hook-Installation-Target-Type')} ${header('X-GitHub-Hook-Installation-Target-ID')}, expected ${target.join(' ')}`,
        );
      const validator = webhooks.payloadValidator(key);
      if (!validator(payload)) problems.push(`${where}: ${describeErrors(validator).join('; ')}`);
    }
    console.log(
      `GitHub contract, webhooks: ${received.length} deliveries of ${counts.size} kinds validated against @octokit/openapi-webhooks: ` +
        [...counts].map(([k, n]) => `${k} ×${n}`).join(', '),
    );
    expect(problems).toEqual([]);
    expect([...counts.keys()].sort()).toEqual([
      'branch-protection-rule-created',
      'branch-protection-rule-deleted',
      'branch-protection-rule-edited',
      'check-run-completed',
      'check-run-created',
      'issue-comment-created',
      'pull-request-closed',
      'pull-request-edited',
      'pull-request-labeled',
      'pull-request-opened',
      'pull-request-synchronize',
      'pull-request-unlabeled',
      'push',
      'repository-ruleset-created',
      'repository-ruleset-deleted',
      'repository-ruleset-edited',
      'status',
    ]);
  });

  it('sends a push for every branch change the API makes: created, moved, merged into, landed on and deleted', async () => {
    await drive();
    const pushes = received
      .filter((d) => d.headers['x-github-event'] === 'push')
      .map(
        (d) =>
          JSON.parse(d.body) as {
            ref: string;
            before: string;
            after: string;
            created: boolean;
            deleted: boolean;
            forced: boolean;
            repository: { full_name: string };
          },
      )
      .filter((p) => p.repository.full_name === 'octo/widgets');
    const zero = '0'.repeat(40);
    const refs = new Set(pushes.map((p) => p.ref));
    // Every branch the project touched: the scratch branches (created, merged into, deleted), the candidate, the fence, and main (landed).
    for (const ref of ['refs/heads/mq-build/mq/q/b1', 'refs/heads/mq/q/b1', 'refs/heads/mq-fence/q', 'refs/heads/main'])
      expect([ref, refs.has(ref)]).toEqual([ref, true]);
    const scratch = pushes.filter((p) => p.ref === 'refs/heads/mq-build/mq/q/b1');
    expect(scratch[0]).toMatchObject({ before: zero, created: true, deleted: false });
    // Two merges (PR 1, PR 2) moved it, each a push from the commit before.
    expect(scratch.filter((p) => !p.created && !p.deleted).length).toBeGreaterThanOrEqual(2);
    expect(scratch.at(-1)).toMatchObject({ after: zero, deleted: true, created: false });
    for (let i = 1; i < scratch.length; i++) if (!scratch[i].created) expect(scratch[i].before).toBe(scratch[i - 1].after);
    expect(pushes.filter((p) => p.ref === 'refs/heads/mq/q/b1').at(-1)).toMatchObject({ after: zero, deleted: true });
    expect(pushes.filter((p) => p.ref === 'refs/heads/main')).toHaveLength(1);
  });
});

/** The field node at a GraphQL response path (aliases first, as the answer names them). */
function fieldAt(selectionSet: SelectionSetNode, path: readonly (string | number)[]): FieldNode | undefined {
  let set: SelectionSetNode | undefined = selectionSet;
  let field: FieldNode | undefined;
  for (const key of path) {
    if (typeof key === 'number') continue;
    field = set?.selections.find((s): s is FieldNode => s.kind === Kind.FIELD && (s.alias?.value ?? s.name.value) === key);
    if (!field) return undefined;
    set = field.selectionSet;
  }
  return field;
}
