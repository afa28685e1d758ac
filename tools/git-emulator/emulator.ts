/**
 * A local git provider emulator: an HTTP server speaking the subset of GitHub's REST API (and of
 * GitLab's v4 API) the Delivery Platform API calls, written from their public documentation:
 * paths, status codes, `Link` pagination, rate-limit headers, the OAuth code exchange and the
 * app installation endpoints. Its repositories are real bare git repositories on disk.
 *
 * Tests point the real Octokit / gitbeaker clients at it; `npm start` runs it as the demo provider.
 * Knobs (`down`, `delayMs`, `rateLimited`) let tests make it fail the ways a provider fails.
 *
 * This file is the facade: it owns the HTTP server and the knobs every request passes through, and
 * composes the concern files, each one thing:
 * - state.ts: users, tokens, repositories, installations, knobs and the records tests read;
 * - http.ts: the route table's types, JSON answers, `Link` pagination;
 * - bare-git.ts: the git CLI on the bare repositories;
 * - rest-repos.ts: REST repositories, collaborators, statuses and git data (refs, commits, compare, merges);
 * - graphql.ts: the GraphQL `updateRefs` mutation;
 * - actions.ts: GitHub Actions workflow runs and jobs;
 * - apps-oauth.ts: /user, app installations and their tokens, the web OAuth flow;
 * - webhooks.ts: building, signing and posting webhook deliveries;
 * - pulls.ts: pull requests' heads, titles, labels, comments and reviews, and GitHub's review decision;
 * - issues.ts: REST for a PR's conversation (the PR, comments, reactions, labels) and a person's permission;
 * - rest-pulls.ts: REST updates of a pull request (closing it, its title);
 * - branch-rules.ts: branch protection rules and rulesets (a branch's required checks), and their webhooks;
 * - gitlab.ts: GitLab's v4 API.
 */
import http from 'node:http';
import { rmSync } from 'node:fs';
import { Actions } from './actions';
import { AppsOAuth } from './apps-oauth';
import { BranchRules, type EmulatedRuleset, type ProtectionCheck, type RulesetCheck } from './branch-rules';
import { Gitlab } from './gitlab';
import { Graphql } from './graphql';
import { Issues } from './issues';
import { fail, readBody, send, type Route, type RouteContext } from './http';
import { type EmulatedComment, type EmulatedPull, type PullFields, Pulls, type ReviewRules, type ReviewState } from './pulls';
import { RestPulls } from './rest-pulls';
import { RestRepos } from './rest-repos';
import { EmulatorState, type EmulatedDelivery, type EmulatedInstallation, type EmulatedMembership, type EmulatedRun } from './state';
import { Webhooks } from './webhooks';

export type {
  EmulatedDelivery,
  EmulatedInstallation,
  EmulatedJob,
  EmulatedMembership,
  EmulatedRepository,
  EmulatedRun,
  EmulatedUser,
  RepositoryRole,
} from './state';
export type { EmulatedComment, EmulatedPull } from './pulls';
export { signature256 } from './webhooks';

export class GitProviderEmulator extends EmulatorState {
  private readonly pulls = new Pulls(this);
  private readonly webhooks = new Webhooks(this, this.pulls);
  private readonly apps = new AppsOAuth(this);
  private readonly actions = new Actions(this);
  private readonly restRepos = new RestRepos(this, this.webhooks);
  private readonly issues = new Issues(this, this.pulls, this.webhooks);
  private readonly restPulls = new RestPulls(this, this.pulls, this.webhooks);
  private readonly graphql = new Graphql(this, this.webhooks, this.pulls);
  private readonly gitlab = new Gitlab(this);
  private readonly branchRules = new BranchRules(this, this.webhooks);
  /** Every GitHub route, in the order they are tried. */
  private readonly routes: Route[] = [
    {
      method: 'GET',
      path: /^\/meta$/,
      auth: 'none',
      handle: ({ res }) => send(res, 200, { verifiable_password_authentication: false, installed_version: '3.14.0' }),
    },
    ...this.apps.routes,
    ...this.actions.routes,
    ...this.branchRules.routes,
    ...this.issues.routes,
    ...this.restRepos.routes,
    ...this.restPulls.routes,
    ...this.graphql.routes,
    ...this.webhooks.routes,
  ];

  async start(port = 0, host = '127.0.0.1'): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(port, host, resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    rmSync(this.root, { recursive: true, force: true });
  }

  // ------------------------------------------------------------------ Actions

  /**
   * Adds `count` workflow runs of `jobsPerRun` jobs each to a repository, deterministic for a seed:
   * runs spread over the `days` before `end` (newest first, as GitHub lists them), a few workflows,
   * jobs of 20 s to 15 min on ubuntu (most), windows, macos and self-hosted runners, and every
   * tenth run re-run once (its jobs are listed under both attempts). Returns the runs added.
   */
  addWorkflowRuns(owner: string, name: string, options: { count: number; jobsPerRun?: number; seed?: number; end?: Date; days?: number }): EmulatedRun[] {
    return this.actions.addWorkflowRuns(owner, name, options);
  }

  workflowRuns(owner: string, name: string): EmulatedRun[] {
    return this.actions.workflowRuns(owner, name);
  }

  /** Requests for one page of a repository's workflow runs, by page number. */
  runPageRequests(owner: string, name: string): number[] {
    return this.actions.runPageRequests(owner, name);
  }

  // ------------------------------------------------------------------ apps and OAuth

  /**
   * An app installation on `account`, which `users` can access (GET /user/installations lists it
   * for them). `type`: User when `account` is a user of the emulator, else Organization;
   * `repositories`: the `owner/name`s it covers (selected), else all of the account's.
   */
  addInstallation(account: string, users: string[], options: { type?: 'User' | 'Organization'; repositories?: string[] } = {}): EmulatedInstallation {
    return this.apps.addInstallation(account, users, options);
  }

  /** `login`'s membership of organization `org` (GET /user/memberships/orgs/{org}); role member and state active unless told. */
  addOrgMember(org: string, login: string, membership: Partial<EmulatedMembership> = {}): void {
    this.apps.addOrgMember(org, login, membership);
  }

  /** The bot login an installation token acts as: `<app slug>[bot]`, with write access to the installation account's repositories. */
  get botLogin(): string {
    return this.apps.botLogin;
  }

  /** What the provider's authorize page would hand back to the callback for `login`. */
  issueCode(login: string): string {
    return this.apps.issueCode(login);
  }

  // ------------------------------------------------------------------ webhooks

  /**
   * Sends a webhook delivery to `webhook.url`, signed with `webhook.secret` (or `options.secret`,
   * or the exact `options.signature`, or unsigned with `signature: null`), and records it.
   */
  deliver(
    event: string,
    payload: Record<string, unknown>,
    options: { secret?: string; signature?: string | null; id?: string } = {},
  ): Promise<EmulatedDelivery> {
    return this.webhooks.deliver(event, payload, options);
  }

  /** Sends a recorded delivery again, byte for byte with its id (GitHub's "Redeliver"). */
  redeliver(id: string): Promise<EmulatedDelivery> {
    return this.webhooks.redeliver(id);
  }

  /** CI finished on `sha`: a check run `name` completed with `conclusion`, announced by a `check_run` webhook. */
  checkRunCompleted(
    repository: string,
    sha: string,
    name: string,
    conclusion: 'success' | 'failure' | 'neutral' | 'cancelled' | 'timed_out' | 'skipped',
    detailsUrl?: string,
    /** The GitHub App that created the check run (its id and slug). */
    app?: { id: number; slug: string },
  ): Promise<EmulatedDelivery> {
    return this.webhooks.checkRunCompleted(repository, sha, name, conclusion, detailsUrl, app);
  }

  /**
   * A check run `name` on `sha`, announced by a `check_run` webhook: `created` in progress without
   * `conclusion`, else `completed` (pass the started run's `id` and `startedAt` to complete it).
   */
  checkRun(repository: string, sha: string, name: string, run: Parameters<Webhooks['checkRun']>[3]): Promise<EmulatedDelivery> {
    return this.webhooks.checkRun(repository, sha, name, run);
  }

  /** `login` reviews PR `number` (on `commitId`, by default the PR's head as the last pull_request event set it). */
  review(repository: string, number: number, login: string, state: ReviewState, commitId?: string): void {
    this.pulls.review(repository, number, login, state, commitId);
  }

  /**
   * PR `number` of `repository` as the emulator keeps it (made, open, when new): its head, title,
   * state and comments; a test sets the title a PR was opened with and reads what was done to it.
   */
  pull(repository: string, number: number, headSha?: string): EmulatedPull {
    return this.pulls.pull(repository, number, headSha);
  }

  /** The repository's review rules (GitHub's defaults: a review required, stale approvals kept on a push). */
  reviewRules(repository: string, rules: Partial<ReviewRules>): void {
    this.pulls.setRules(repository, rules);
  }

  /** A commit status on `sha` (what a CI using the statuses API sends). */
  commitStatus(repository: string, sha: string, context: string, state: 'success' | 'failure' | 'error' | 'pending'): Promise<EmulatedDelivery> {
    return this.webhooks.commitStatus(repository, sha, context, state);
  }

  /**
   * A pull request event: `opened`, `synchronize` (a new head was pushed), `edited` or `closed`;
   * `title` sets the PR's title (an `edited` with a new title says what it was before).
   */
  pullRequest(
    repository: string,
    action: 'synchronize' | 'closed' | 'opened' | 'edited',
    pr: { number: number; headSha: string; baseRef: string; merged?: boolean; title?: string },
  ): Promise<EmulatedDelivery> {
    return this.webhooks.pullRequest(repository, action, pr);
  }

  /** Sets PR `number`'s title, state, draft flag, base or author as GitHub would have them (no webhook); returns it. */
  setPullRequest(repository: string, number: number, fields: PullFields & { headSha?: string }): EmulatedPull {
    return this.pulls.update(repository, number, fields);
  }

  /** PR `number` as the emulator holds it (its labels, comments and their reactions), if it knows it. */
  pullRequestOf(repository: string, number: number): EmulatedPull | undefined {
    return this.pulls.known(repository, number);
  }

  /** `login` adds (or removes) `label` on PR `number`, as the REST API would: the `labeled` (`unlabeled`) webhook follows. */
  async label(repository: string, number: number, label: string, login: string, action: 'labeled' | 'unlabeled' = 'labeled'): Promise<EmulatedDelivery> {
    const pull = this.pulls.update(repository, number, {});
    pull.labels = action === 'labeled' ? [...new Set([...pull.labels, label])] : pull.labels.filter((l) => l !== label);
    return this.webhooks.pullRequestLabel(repository, action, number, label, login);
  }

  /** `login` comments `body` on PR `number`, as the REST API would: the `issue_comment` created webhook follows. */
  async comment(repository: string, number: number, login: string, body: string): Promise<{ comment: EmulatedComment; delivery: EmulatedDelivery }> {
    const pull = this.pulls.update(repository, number, {});
    const comment: EmulatedComment = { id: this.nextId(), by: login, body, at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), reactions: [] };
    pull.comments.push(comment);
    return { comment, delivery: await this.webhooks.issueCommentCreated(repository, number, comment) };
  }

  /** A push to a branch (sent by itself when the API moves a ref; a test sends one for a push from outside). */
  push(repository: string, ref: string, before: string, after: string, pusher = 'someone', options: { commits?: number } = {}): Promise<EmulatedDelivery> {
    return this.webhooks.push(repository, ref, before, after, pusher, options);
  }

  // ------------------------------------------------------------------ branch protection and rulesets

  /**
   * The protection rule of `branch` requires `checks` (each with the GitHub App expected to send it,
   * or none: any source); sends `branch_protection_rule` created or edited.
   */
  setBranchProtection(repository: string, branch: string, checks: ProtectionCheck[]): Promise<EmulatedDelivery | undefined> {
    return this.branchRules.setProtection(repository, branch, checks);
  }

  /** Deletes the protection rule of `branch`; sends `branch_protection_rule` deleted. */
  removeBranchProtection(repository: string, branch: string): Promise<EmulatedDelivery | undefined> {
    return this.branchRules.removeProtection(repository, branch);
  }

  /**
   * Creates a repository ruleset requiring `checks` on the branches `include` names
   * (`refs/heads/main`, `~DEFAULT_BRANCH`, `~ALL`), or replaces ruleset `id`; sends
   * `repository_ruleset` created or edited.
   */
  setRuleset(
    repository: string,
    ruleset: { id?: number; name: string; include: string[]; checks: RulesetCheck[]; enforcement?: EmulatedRuleset['enforcement'] },
  ): Promise<{ ruleset: EmulatedRuleset; delivery?: EmulatedDelivery }> {
    return this.branchRules.setRuleset(repository, ruleset);
  }

  /** Deletes ruleset `id`; sends `repository_ruleset` deleted. */
  deleteRuleset(repository: string, id: number): Promise<EmulatedDelivery | undefined> {
    return this.branchRules.deleteRuleset(repository, id);
  }

  // ------------------------------------------------------------------ HTTP

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.search, at: Date.now() });
    const body = await readBody(req);
    // GitHub Enterprise Server serves the same API under /api/v3.
    const path = url.pathname.replace(/^\/api\/v3(?=\/)/, '');
    if (this.apps.isWebPath(url.pathname)) return this.apps.web(req.method ?? 'GET', url, body, res);
    if (this.knobs.delayMs) await new Promise((r) => setTimeout(r, this.knobs.delayMs));
    if (res.destroyed) return;
    if (this.knobs.down) return send(res, 503, { message: 'Service Unavailable' });
    const reset = Math.floor(Date.now() / 1000) + 3600;
    if (this.knobs.rateLimited) {
      res.setHeader('x-ratelimit-limit', '5000');
      res.setHeader('x-ratelimit-remaining', '0');
      res.setHeader('x-ratelimit-reset', String(reset));
      res.setHeader('retry-after', '42');
      return send(res, 403, {
        message: 'API rate limit exceeded',
        documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting',
      });
    }
    res.setHeader('x-ratelimit-limit', '5000');
    res.setHeader('x-ratelimit-remaining', '4999');
    res.setHeader('x-ratelimit-reset', String(reset));
    if (path.startsWith('/api/v4/')) return this.gitlab.handle(req, url, path.slice('/api/v4'.length), res);
    return this.github({ req, res, url, path, method: req.method ?? 'GET', body, login: '' });
  }

  /**
   * A GitHub API request: the routes that need no user first (/meta, the app-JWT endpoints), then
   * the token (401 without a known one), then the user's routes; 404 when none matches.
   */
  private async github(ctx: RouteContext): Promise<void> {
    const matching = (auth: (a: Route['auth']) => boolean) => {
      for (const route of this.routes) {
        if (!auth(route.auth) || (route.method !== undefined && route.method !== ctx.method)) continue;
        const match = ctx.path.match(route.path);
        if (match) return { route, match };
      }
      return undefined;
    };
    let found = matching((a) => a !== 'user');
    if (!found) {
      const login = this.apps.authenticate(ctx.req);
      if (!login) return fail(ctx.res, 401, 'Bad credentials');
      ctx.login = login;
      found = matching((a) => a === 'user');
    }
    if (!found) return fail(ctx.res, 404, 'Not Found');
    try {
      await found.route.handle(ctx, found.match);
    } catch {
      fail(ctx.res, 500, 'Server Error');
    }
  }
}
