/**
 * A local git provider emulator: an HTTP server speaking the subset of GitHub's REST API (and of
 * GitLab's v4 API) the Delivery Platform API calls, written from their public documentation:
 * paths, status codes, `Link` pagination, rate-limit headers, the OAuth code exchange and the
 * app installation endpoints. Its repositories are real bare git repositories on disk.
 *
 * Tests point the real Octokit / gitbeaker clients at it; `npm start` runs it as the demo provider.
 * Knobs (`down`, `delayMs`, `rateLimited`) let tests make it fail the ways a provider fails.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHmac, randomBytes, randomUUID, verify as verifySignature, type KeyObject } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface EmulatedUser {
  id: number;
  login: string;
}

export interface EmulatedRepository {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  description: string | null;
  defaultBranch: string;
  collaborators: string[];
  /** The bare repository on disk. */
  path: string;
  /** GitHub Actions history, newest run first (see addWorkflowRuns). */
  runs: EmulatedRun[];
}

export interface EmulatedDelivery {
  id: string;
  event: string;
  body: string;
  signature: string;
  status: number;
  response: string;
}

export interface EmulatedJob {
  id: number;
  runId: number;
  runAttempt: number;
  name: string;
  labels: string[];
  conclusion: string;
  startedAt: string;
  completedAt: string;
}

export interface EmulatedRun {
  id: number;
  workflowId: number;
  name: string;
  event: string;
  runNumber: number;
  runAttempt: number;
  conclusion: string;
  createdAt: string;
  runStartedAt: string;
  updatedAt: string;
  jobs: EmulatedJob[];
}

export interface EmulatedInstallation {
  id: number;
  account: string;
  /** Logins of the users who may access it. */
  users: string[];
}

interface Knobs {
  /** Every API call answers 503. */
  down: boolean;
  /** Every API call waits this long before answering. */
  delayMs: number;
  /** Every API call answers 403 with x-ratelimit-remaining: 0 and retry-after. */
  rateLimited: boolean;
  /**
   * Until this instant (epoch ms) the Actions endpoints answer `rateLimitStatus` (403 or 429) with
   * `retry-after` and `x-ratelimit-reset` saying when the limit resets (0: not limited).
   */
  actionsRateLimitedUntil: number;
  rateLimitStatus: 403 | 429;
  /** The next this-many Actions calls answer 502 (a transient provider failure). */
  actionsFailures: number;
  /** The next this-many git database, compare and merge calls answer `gitFailureStatus` (502 unless set). */
  gitFailures: number;
  /** The next this-many commit status posts answer 502. */
  statusFailures: number;
  /** The status of those failures (502, 503...). */
  gitFailureStatus?: number;
  /** With those failures, a `Retry-After` header (seconds, or an HTTP date), as GitHub sends with some 503s. */
  gitFailureRetryAfter?: string;
  /**
   * Branches (`owner/repo:branch`, or `branch` for every repository) that refuse ref updates and
   * deletions as a GitHub branch protection rule does: 422 "Protected branch update failed for
   * refs/heads/<branch>." (the REST API's answer to PATCH/DELETE git/refs on such a branch).
   */
  protectedBranches: string[];
  /**
   * When set, a GraphQL `updateRefs` that arrives is held (its refs not yet looked at) until this
   * promise settles, and `heldUpdateRefs` counts it: a request delayed in flight, for fencing tests.
   */
  holdUpdateRefs: Promise<void> | null;
  heldUpdateRefs: number;
}

const PER_PAGE_DEFAULT = 30;

export class GitProviderEmulator {
  readonly clientId = 'Iv1.emulatorclient';
  readonly clientSecret = 'emulator-client-secret';
  readonly appSlug = 'delivery-platform-demo';
  readonly knobs: Knobs = {
    down: false,
    delayMs: 0,
    rateLimited: false,
    actionsRateLimitedUntil: 0,
    rateLimitStatus: 403,
    actionsFailures: 0,
    gitFailures: 0,
    statusFailures: 0,
    protectedBranches: [],
    holdUpdateRefs: null,
    heldUpdateRefs: 0,
  };
  /** Where the app install and authorize pages send the browser back (the API's /scm/callback). */
  callbackUrl = '';
  /** The user the authorize/install pages act as (there is no login page). */
  browserUser = '';
  /** Every request, in order, with when it arrived (epoch ms). */
  readonly requests: { method: string; path: string; query: string; at: number }[] = [];
  /**
   * Where webhook deliveries go (the API's POST /webhooks/github) and the secret they are signed
   * with; unset, nothing is sent. `installationId` is put in every payload, as for a GitHub App.
   */
  webhook?: { url: string; secret: string; installationId?: number };
  /** Every delivery sent, in order, with the answer (redeliver() sends one again). */
  readonly deliveries: EmulatedDelivery[] = [];
  /**
   * The GitHub App whose JWTs the app endpoints accept (RS256, `iss` = appId, verified with its
   * public key). Unset: any Bearer value is accepted (the OAuth-only tests).
   */
  app?: { appId: string; publicKey: KeyObject };
  /** The installation tokens issued, with the installation each acts for. */
  readonly installationTokens: { token: string; installationId: number; expiresAt: string }[] = [];
  /** Every ref the API moved (PATCH or POST git/refs), with the credential that moved it. */
  readonly refMoves: { repository: string; ref: string; sha: string; by: string }[] = [];
  /** Commit statuses posted (POST /repos/{o}/{r}/statuses/{sha}), with the credential that posted them. */
  readonly statuses: { repository: string; sha: string; state: string; context: string; description?: string; targetUrl?: string; by: string }[] = [];

  private readonly users = new Map<string, EmulatedUser>();
  private readonly tokens = new Map<string, string>();
  private readonly codes = new Map<string, { login: string; used: boolean }>();
  private readonly repos = new Map<string, EmulatedRepository>();
  private readonly installations = new Map<number, EmulatedInstallation>();
  private readonly root = mkdtempSync(join(tmpdir(), 'git-emulator-'));
  private server?: http.Server;
  private nextId = 1000;

  get url(): string {
    const address = this.server?.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

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

  addUser(login: string): { user: EmulatedUser; token: string } {
    const user = this.users.get(login) ?? { id: this.nextId++, login };
    this.users.set(login, user);
    return { user, token: this.issueToken(login) };
  }

  issueToken(login: string): string {
    const token = `ghp_${randomBytes(18).toString('base64url')}`;
    this.tokens.set(token, login);
    return token;
  }

  revokeToken(token: string): void {
    this.tokens.delete(token);
  }

  /** A repository backed by a real bare git repository with one commit on its default branch. */
  addRepository(
    owner: string,
    name: string,
    options: Partial<Pick<EmulatedRepository, 'private' | 'description' | 'defaultBranch' | 'collaborators'>> = {},
  ): EmulatedRepository {
    const path = join(this.root, owner, `${name}.git`);
    mkdirSync(path, { recursive: true });
    const repo: EmulatedRepository = {
      id: this.nextId++,
      owner,
      name,
      private: options.private ?? false,
      description: options.description ?? null,
      defaultBranch: options.defaultBranch ?? 'main',
      collaborators: options.collaborators ?? [owner],
      path,
      runs: [],
    };
    initBareRepository(path, repo.defaultBranch, repo.description ?? undefined);
    this.repos.set(`${owner}/${name}`.toLowerCase(), repo);
    return repo;
  }

  /**
   * Adds `count` workflow runs of `jobsPerRun` jobs each to a repository, deterministic for a seed:
   * runs spread over the `days` before `end` (newest first, as GitHub lists them), a few workflows,
   * jobs of 20 s to 15 min on ubuntu (most), windows, macos and self-hosted runners, and every
   * tenth run re-run once (its jobs are listed under both attempts). Returns the runs added.
   */
  addWorkflowRuns(owner: string, name: string, options: { count: number; jobsPerRun?: number; seed?: number; end?: Date; days?: number }): EmulatedRun[] {
    const repo = this.repos.get(`${owner}/${name}`.toLowerCase());
    if (!repo) throw new Error(`no repository ${owner}/${name}`);
    let state = (options.seed ?? 1) >>> 0 || 1;
    const random = () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 4294967296;
    };
    const end = (options.end ?? new Date()).getTime();
    const span = (options.days ?? 30) * 86_400_000;
    const workflows = [
      { id: 161335, name: 'CI' },
      { id: 161336, name: 'Deploy' },
      { id: 161337, name: 'Nightly' },
      { id: 161338, name: 'Lint' },
    ];
    const runners = [['ubuntu-latest'], ['ubuntu-latest'], ['ubuntu-latest'], ['ubuntu-22.04'], ['windows-latest'], ['macos-14'], ['self-hosted', 'linux']];
    const added: EmulatedRun[] = [];
    const base = repo.runs.length;
    for (let i = 0; i < options.count; i++) {
      const created = end - Math.floor(((i + 1) / (options.count + 1)) * span);
      const workflow = workflows[Math.floor(random() * workflows.length)];
      const runAttempt = i % 10 === 9 ? 2 : 1;
      const run: EmulatedRun = {
        id: 9_000_000_000 + this.nextId++,
        workflowId: workflow.id,
        name: workflow.name,
        event: random() < 0.7 ? 'push' : 'pull_request',
        runNumber: base + options.count - i,
        runAttempt,
        conclusion: random() < 0.9 ? 'success' : 'failure',
        createdAt: iso(created),
        runStartedAt: iso(created + 2_000),
        updatedAt: iso(created),
        jobs: [],
      };
      let last = created;
      for (let attempt = 1; attempt <= runAttempt; attempt++) {
        for (let j = 0; j < (options.jobsPerRun ?? 5); j++) {
          const started = created + 5_000 + (attempt - 1) * 1_200_000 + Math.floor(random() * 60_000);
          const completed = started + 20_000 + Math.floor(random() * 880_000);
          last = Math.max(last, completed);
          run.jobs.push({
            id: 30_000_000_000 + this.nextId++,
            runId: run.id,
            runAttempt: attempt,
            name: `job-${j + 1}`,
            labels: runners[Math.floor(random() * runners.length)],
            conclusion: run.conclusion,
            startedAt: iso(started),
            completedAt: iso(completed),
          });
        }
      }
      run.updatedAt = iso(last);
      added.push(run);
    }
    repo.runs.push(...added);
    repo.runs.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id);
    return added;
  }

  workflowRuns(owner: string, name: string): EmulatedRun[] {
    return this.repos.get(`${owner}/${name}`.toLowerCase())?.runs ?? [];
  }

  /** Requests for one page of a repository's workflow runs, by page number. */
  runPageRequests(owner: string, name: string): number[] {
    const path = `/repos/${owner}/${name}/actions/runs`.toLowerCase();
    return this.requests.filter((r) => r.path.toLowerCase() === path).map((r) => Number(new URLSearchParams(r.query).get('page') ?? 1));
  }

  addInstallation(account: string, users: string[]): EmulatedInstallation {
    const installation = { id: this.nextId++, account, users };
    this.installations.set(installation.id, installation);
    return installation;
  }

  /** The bot login an installation token acts as: `<app slug>[bot]`, with write access to the installation account's repositories. */
  get botLogin(): string {
    return `${this.appSlug}[bot]`;
  }

  private issueInstallationToken(installation: EmulatedInstallation): { token: string; expires_at: string } {
    const token = `ghs_${randomBytes(18).toString('base64url')}`;
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const bot = this.botLogin;
    if (!this.users.has(bot)) this.users.set(bot, { id: this.nextId++, login: bot });
    for (const repo of this.repos.values()) if (repo.owner === installation.account && !repo.collaborators.includes(bot)) repo.collaborators.push(bot);
    this.tokens.set(token, bot);
    this.installationTokens.push({ token, installationId: installation.id, expiresAt });
    return { token, expires_at: expiresAt };
  }

  // ------------------------------------------------------------------ webhooks

  /**
   * Sends a webhook delivery to `webhook.url`, signed with `webhook.secret` (or `options.secret`,
   * or the exact `options.signature`, or unsigned with `signature: null`), and records it.
   */
  async deliver(
    event: string,
    payload: Record<string, unknown>,
    options: { secret?: string; signature?: string | null; id?: string } = {},
  ): Promise<EmulatedDelivery> {
    if (!this.webhook) throw new Error('the emulator has no webhook configured');
    const full = this.webhook.installationId !== undefined ? { ...payload, installation: { id: this.webhook.installationId } } : payload;
    const body = JSON.stringify(full);
    const signature = options.signature === undefined ? signature256(body, options.secret ?? this.webhook.secret) : options.signature;
    return this.post({ id: options.id ?? randomUUID(), event, body, signature: signature ?? '', status: 0, response: '' });
  }

  /** Sends a recorded delivery again, byte for byte with its id (GitHub's "Redeliver"). */
  redeliver(id: string): Promise<EmulatedDelivery> {
    const original = this.deliveries.find((d) => d.id === id);
    if (!original) throw new Error(`no delivery ${id}`);
    return this.post({ ...original, status: 0, response: '' });
  }

  /** CI finished on `sha`: a check run `name` completed with `conclusion`, announced by a `check_run` webhook. */
  checkRunCompleted(
    repository: string,
    sha: string,
    name: string,
    conclusion: 'success' | 'failure' | 'neutral' | 'cancelled' | 'timed_out',
    detailsUrl?: string,
  ): Promise<EmulatedDelivery> {
    return this.deliver('check_run', {
      action: 'completed',
      check_run: {
        id: this.nextId++,
        name,
        head_sha: sha,
        status: 'completed',
        conclusion,
        details_url: detailsUrl ?? `https://ci.example.test/${sha.slice(0, 12)}`,
        app: { slug: 'ci' },
      },
      repository: this.repoRef(repository),
    });
  }

  /** A commit status on `sha` (what a CI using the statuses API sends). */
  commitStatus(repository: string, sha: string, context: string, state: 'success' | 'failure' | 'error' | 'pending'): Promise<EmulatedDelivery> {
    return this.deliver('status', { sha, context, state, target_url: `https://ci.example.test/${sha.slice(0, 12)}`, repository: this.repoRef(repository) });
  }

  /** A pull request event: `synchronize` (a new head was pushed) or `closed`. */
  pullRequest(
    repository: string,
    action: 'synchronize' | 'closed' | 'opened',
    pr: { number: number; headSha: string; baseRef: string; merged?: boolean },
  ): Promise<EmulatedDelivery> {
    return this.deliver('pull_request', {
      action,
      number: pr.number,
      pull_request: {
        number: pr.number,
        state: action === 'closed' ? 'closed' : 'open',
        merged: pr.merged ?? false,
        head: { sha: pr.headSha, ref: `pr-${pr.number}` },
        base: { ref: pr.baseRef },
      },
      repository: this.repoRef(repository),
    });
  }

  /** A push to a branch (sent by itself when the API moves a ref; a test sends one for a push from outside). */
  push(repository: string, ref: string, before: string, after: string, pusher = 'someone'): Promise<EmulatedDelivery> {
    return this.deliver('push', {
      ref,
      before,
      after,
      created: /^0+$/.test(before),
      deleted: /^0+$/.test(after),
      pusher: { name: pusher },
      repository: this.repoRef(repository),
    });
  }

  private repoRef(repository: string): Record<string, unknown> {
    const repo = this.repos.get(repository.toLowerCase());
    return {
      id: repo?.id ?? 0,
      full_name: repo ? `${repo.owner}/${repo.name}` : repository,
      name: repo?.name ?? repository.split('/')[1],
      owner: { login: repo?.owner ?? repository.split('/')[0] },
    };
  }

  private async post(delivery: EmulatedDelivery): Promise<EmulatedDelivery> {
    const target = this.webhook as { url: string };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/emulator',
      'x-github-event': delivery.event,
      'x-github-delivery': delivery.id,
    };
    if (delivery.signature) headers['x-hub-signature-256'] = delivery.signature;
    const res = await fetch(target.url, { method: 'POST', headers, body: delivery.body });
    delivery.status = res.status;
    delivery.response = await res.text();
    this.deliveries.push(delivery);
    return delivery;
  }

  private refMoved(repo: EmulatedRepository, ref: string, before: string, after: string, by: string): void {
    const repository = `${repo.owner}/${repo.name}`;
    this.refMoves.push({ repository, ref, sha: after, by });
    // As GitHub: a push event for every branch update, whoever made it (the queue's own lands too).
    if (this.webhook && ref.startsWith('refs/heads/')) void this.push(repository, ref, before, after, by).catch(() => undefined);
  }

  private postStatus(login: string, match: RegExpMatchArray, rawBody: string, res: http.ServerResponse): void {
    const repo = this.repos.get(`${decodeURIComponent(match[1])}/${decodeURIComponent(match[2])}`.toLowerCase());
    if (!repo || (repo.private && !repo.collaborators.includes(login))) return send(res, 404, { message: 'Not Found' });
    if (!repo.collaborators.includes(login)) return send(res, 403, { message: 'Resource not accessible by integration' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(rawBody || '{}') as Record<string, unknown>;
    } catch {
      return send(res, 400, { message: 'Problems parsing JSON' });
    }
    const state = body.state;
    if (state !== 'pending' && state !== 'success' && state !== 'failure' && state !== 'error') return send(res, 422, { message: 'Validation Failed' });
    const context = typeof body.context === 'string' ? body.context : 'default';
    if (typeof body.description === 'string' && body.description.length > 140)
      return send(res, 422, {
        message: 'Validation Failed',
        errors: [{ field: 'description', code: 'custom', message: 'description is too long (maximum is 140 characters)' }],
      });
    const status = {
      repository: `${repo.owner}/${repo.name}`,
      sha: match[3],
      state,
      context,
      by: login,
      ...(typeof body.description === 'string' && { description: body.description }),
      ...(typeof body.target_url === 'string' && { targetUrl: body.target_url }),
    };
    this.statuses.push(status);
    return send(res, 201, {
      id: this.nextId++,
      state,
      context,
      description: status.description ?? null,
      target_url: status.targetUrl ?? null,
      creator: { login },
    });
  }

  /** What the provider's authorize page would hand back to the callback for `login`. */
  issueCode(login: string): string {
    const code = randomBytes(10).toString('hex');
    this.codes.set(code, { login, used: false });
    return code;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.search, at: Date.now() });
    const body = await readBody(req);
    // GitHub Enterprise Server serves the same API under /api/v3.
    const path = url.pathname.replace(/^\/api\/v3(?=\/)/, '');
    if (url.pathname.startsWith('/login/') || url.pathname.startsWith('/apps/')) return this.web(req.method ?? 'GET', url, body, res);
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
    if (path.startsWith('/api/v4/')) return this.gitlab(req, url, path.slice('/api/v4'.length), res);
    return this.github(req, url, path, res, body);
  }

  private github(req: http.IncomingMessage, url: URL, path: string, res: http.ServerResponse, body: string): void | Promise<void> {
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/meta') return send(res, 200, { verifiable_password_authentication: false, installed_version: '3.14.0' });
    const appInstallation = path.match(/^\/app\/installations\/(\d+)(\/access_tokens)?$/);
    if (appInstallation) {
      // App endpoints authenticate with the app's JWT (verified when an app is configured).
      const jwt = (req.headers.authorization ?? '').match(/^bearer (\S+)$/i)?.[1];
      if (!jwt) return send(res, 401, { message: 'A JSON web token could not be decoded' });
      if (this.app && !verifyAppJwt(jwt, this.app)) return send(res, 401, { message: "'Expiration time' claim ('exp') or signature is invalid" });
      const installation = this.installations.get(Number(appInstallation[1]));
      if (!installation) return send(res, 404, { message: 'Not Found' });
      if (appInstallation[2] && method === 'POST') return send(res, 201, this.issueInstallationToken(installation));
      if (!appInstallation[2] && method === 'GET') return send(res, 200, installationJson(installation, this.users.get(installation.account)));
      return send(res, 404, { message: 'Not Found' });
    }
    const login = this.authenticate(req);
    if (!login) return send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    const user = this.users.get(login) as EmulatedUser;
    if (method === 'GET' && path === '/user') return send(res, 200, { login: user.login, id: user.id, type: 'User', name: user.login });
    if (method === 'GET' && path === '/user/installations') {
      const mine = [...this.installations.values()].filter((i) => i.users.includes(login));
      const page = paginate(mine, url, res);
      return send(res, 200, { total_count: mine.length, installations: page.map((i) => installationJson(i, this.users.get(i.account))) });
    }
    const actions = path.match(/^\/repos\/([^/]+)\/([^/]+)\/actions\/runs(?:\/(\d+)\/jobs)?$/);
    if (method === 'GET' && actions) return this.actions(login, url, actions, res);
    const statusPost = path.match(/^\/repos\/([^/]+)\/([^/]+)\/statuses\/([0-9a-f]{40})$/);
    if (method === 'POST' && statusPost) {
      if (this.knobs.statusFailures > 0) {
        this.knobs.statusFailures--;
        return send(res, 502, { message: 'Server Error' });
      }
      return this.postStatus(login, statusPost, body, res);
    }
    // GraphQL: GitHub.com serves it at /graphql, Enterprise Server at /api/graphql.
    if (method === 'POST' && (path === '/graphql' || path === '/api/graphql'))
      return this.graphql(login, body, res).catch(() => send(res, 500, { message: 'Server Error' }));
    const gitData = path.match(/^\/repos\/([^/]+)\/([^/]+)\/(git\/ref|git\/refs|git\/commits|compare|merges)(?:\/(.+))?$/);
    if (gitData) return this.gitData(login, method, gitData, body, res).catch(() => send(res, 500, { message: 'Server Error' }));
    const repoPath = path.match(/^\/repos\/([^/]+)\/([^/]+)(\/collaborators)?$/);
    if (method === 'GET' && repoPath) {
      const repo = this.repos.get(`${decodeURIComponent(repoPath[1])}/${decodeURIComponent(repoPath[2])}`.toLowerCase());
      // Private repositories the user cannot see are a 404, as on GitHub.
      if (!repo || (repo.private && !repo.collaborators.includes(login))) return send(res, 404, { message: 'Not Found' });
      if (repoPath[3]) {
        if (!repo.collaborators.includes(login)) return send(res, 403, { message: 'Must have push access to view repository collaborators.' });
        return send(
          res,
          200,
          paginate(repo.collaborators, url, res).map((c) => ({ login: c, id: this.users.get(c)?.id ?? 0, type: 'User' })),
        );
      }
      return send(res, 200, this.repositoryJson(repo));
    }
    return send(res, 404, { message: 'Not Found' });
  }

  /** GET /repos/{owner}/{repo}/actions/runs and GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs (filter=latest|all). */
  private actions(login: string, url: URL, match: RegExpMatchArray, res: http.ServerResponse): void {
    const now = Date.now();
    if (this.knobs.actionsRateLimitedUntil > now) {
      res.setHeader('x-ratelimit-remaining', '0');
      res.setHeader('x-ratelimit-reset', String(Math.ceil(this.knobs.actionsRateLimitedUntil / 1000)));
      res.setHeader('retry-after', String(Math.ceil((this.knobs.actionsRateLimitedUntil - now) / 1000)));
      return send(res, this.knobs.rateLimitStatus, {
        message: 'API rate limit exceeded',
        documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting',
      });
    }
    if (this.knobs.actionsFailures > 0) {
      this.knobs.actionsFailures--;
      return send(res, 502, { message: 'Server Error' });
    }
    const repo = this.repos.get(`${decodeURIComponent(match[1])}/${decodeURIComponent(match[2])}`.toLowerCase());
    if (!repo || (repo.private && !repo.collaborators.includes(login))) return send(res, 404, { message: 'Not Found' });
    const owner = { login: repo.owner, id: this.users.get(repo.owner)?.id ?? 0, type: 'User' };
    if (!match[3]) {
      const page = paginate(repo.runs, url, res);
      return send(res, 200, { total_count: repo.runs.length, workflow_runs: page.map((run) => runJson(run, repo, owner, this.url)) });
    }
    const run = repo.runs.find((r) => r.id === Number(match[3]));
    if (!run) return send(res, 404, { message: 'Not Found' });
    const jobs = url.searchParams.get('filter') === 'all' ? run.jobs : run.jobs.filter((j) => j.runAttempt === run.runAttempt);
    return send(res, 200, { total_count: jobs.length, jobs: paginate(jobs, url, res).map((job) => jobJson(job, run, repo, this.url)) });
  }

  /**
   * The git database, compare and merge endpoints, served from the bare repository with the git
   * CLI: GET /git/ref/{ref}, POST /git/refs, PATCH and DELETE /git/refs/{ref}, GET
   * /git/commits/{sha}, GET /compare/{base}...{head} and POST /merges. Reads need a repository the
   * user can see (else 404); writes need push access (a collaborator; else 403). Every ref update
   * is a compare-and-swap on the value just read (`git update-ref <ref> <new> <old>`), so a
   * fast-forward check and the update it allows are one atomic step.
   */
  private isProtected(fullName: string, branch: string): boolean {
    return this.knobs.protectedBranches.some((p) => p === branch || p.toLowerCase() === `${fullName}:${branch}`.toLowerCase());
  }

  private async gitData(login: string, method: string, match: RegExpMatchArray, rawBody: string, res: http.ServerResponse): Promise<void> {
    if (this.knobs.gitFailures > 0) {
      this.knobs.gitFailures--;
      if (this.knobs.gitFailureRetryAfter !== undefined) res.setHeader('retry-after', this.knobs.gitFailureRetryAfter);
      const status = this.knobs.gitFailureStatus ?? 502;
      return send(res, status, { message: status === 503 ? 'Service Unavailable' : 'Server Error' });
    }
    const repo = this.repos.get(`${decodeURIComponent(match[1])}/${decodeURIComponent(match[2])}`.toLowerCase());
    if (!repo || (repo.private && !repo.collaborators.includes(login))) return send(res, 404, { message: 'Not Found' });
    if (method !== 'GET' && !repo.collaborators.includes(login)) return send(res, 403, { message: 'Resource not accessible by personal access token' });
    const [kind, rest] = [match[3], match[4] === undefined ? undefined : decodeURIComponent(match[4])];
    let body: Record<string, unknown> = {};
    if (method === 'POST' || method === 'PATCH') {
      try {
        body = JSON.parse(rawBody || '{}') as Record<string, unknown>;
      } catch {
        return send(res, 400, { message: 'Problems parsing JSON' });
      }
    }
    const git = new BareRepository(repo.path);
    const links = new GitLinks(this.url, repo);
    if (kind === 'git/ref' && method === 'GET' && rest) {
      const sha = await git.resolveRef(`refs/${rest}`);
      return sha ? send(res, 200, await links.ref(git, `refs/${rest}`, sha)) : send(res, 404, { message: 'Not Found' });
    }
    if (kind === 'git/refs' && method === 'POST' && rest === undefined) {
      const { ref, sha } = body;
      if (typeof ref !== 'string' || !/^refs\/[^/]+\/.+/.test(ref) || !(await git.validRef(ref)))
        return send(res, 422, { message: 'Reference name is invalid' });
      if (typeof sha !== 'string' || !(await git.hasObject(sha))) return send(res, 422, { message: 'Object does not exist' });
      if (!(await git.updateRef(ref, sha, ''))) return send(res, 422, { message: 'Reference already exists' });
      this.refMoved(repo, ref, '0'.repeat(40), sha, login);
      res.setHeader('location', links.refUrl(ref));
      return send(res, 201, await links.ref(git, ref, sha));
    }
    if (kind === 'git/refs' && (method === 'PATCH' || method === 'DELETE') && rest) {
      const ref = `refs/${rest}`;
      if (!(await git.validRef(ref))) return send(res, 422, { message: 'Reference does not exist' });
      if (ref.startsWith('refs/heads/') && this.isProtected(`${repo.owner}/${repo.name}`, ref.slice('refs/heads/'.length))) {
        return send(res, 422, {
          message: `Protected branch update failed for ${ref}.`,
          documentation_url: 'https://docs.github.com/rest/git/refs#update-a-reference',
          status: '422',
        });
      }
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await git.resolveRef(ref);
        if (!current) return send(res, 422, { message: 'Reference does not exist' });
        if (method === 'DELETE') {
          if (await git.deleteRef(ref, current)) return send(res, 204, undefined);
          continue;
        }
        const { sha, force } = body;
        if (typeof sha !== 'string' || !(await git.hasObject(sha))) return send(res, 422, { message: 'Object does not exist' });
        if (force !== true && !(await git.isAncestor(current, sha))) return send(res, 422, { message: 'Update is not a fast forward' });
        if (await git.updateRef(ref, sha, current)) {
          this.refMoved(repo, ref, current, sha, login);
          return send(res, 200, await links.ref(git, ref, sha));
        }
      }
      return send(res, 409, { message: 'Reference update failed' });
    }
    if (kind === 'git/commits' && method === 'POST' && rest === undefined) {
      const { message, tree, parents } = body;
      if (
        typeof message !== 'string' ||
        typeof tree !== 'string' ||
        !SHA_PATTERN.test(tree) ||
        !(await git.hasObject(tree)) ||
        (await git.objectType(tree)) !== 'tree'
      )
        return send(res, 422, { message: 'Tree SHA does not exist' });
      const list = Array.isArray(parents) ? parents : [];
      for (const p of list)
        if (typeof p !== 'string' || !SHA_PATTERN.test(p) || (await git.resolveCommitish(p)) === null)
          return send(res, 422, { message: 'Parent SHA does not exist or is not a commit object' });
      const identity = { name: login, email: `${this.users.get(login)?.id ?? 0}+${login}@users.noreply.emulator.test` };
      const sha = await git.commitTree(tree, list as string[], message, identity);
      res.setHeader('location', `${links.api}/git/commits/${sha}`);
      return send(res, 201, links.gitCommit((await git.commit(sha))!));
    }
    if (kind === 'git/commits' && method === 'GET' && rest) {
      const commit = SHA_PATTERN.test(rest) ? await git.commit(rest) : null;
      return commit ? send(res, 200, links.gitCommit(commit)) : send(res, 404, { message: 'Not Found' });
    }
    if (kind === 'compare' && method === 'GET' && rest) return this.compare(git, links, rest, res);
    if (kind === 'merges' && method === 'POST' && rest === undefined) return this.merge(git, links, login, body, res);
    return send(res, 404, { message: 'Not Found' });
  }

  /**
   * POST /graphql, the one mutation the engine uses: `updateRefs(input: {repositoryId, refUpdates})`.
   * As GitHub documents it: all updates are performed atomically (here one `git update-ref --stdin`
   * transaction), each `beforeOid` must be where its ref points (zeros: must not exist), an
   * `afterOid` of zeros deletes, and without `force` an update must be a fast-forward. A refusal is
   * HTTP 200 with a generic entry in `errors` and `updateRefs: null`, as GitHub answers it.
   */
  private async graphql(login: string, rawBody: string, res: http.ServerResponse): Promise<void> {
    let request: { query?: unknown; variables?: Record<string, unknown> };
    try {
      request = JSON.parse(rawBody || '{}') as typeof request;
    } catch {
      return send(res, 400, { message: 'Problems parsing JSON' });
    }
    // The same failure knob as the REST git endpoints: an HTTP error (with Retry-After) before anything is looked at.
    if (this.knobs.gitFailures > 0) {
      this.knobs.gitFailures--;
      if (this.knobs.gitFailureRetryAfter !== undefined) res.setHeader('retry-after', this.knobs.gitFailureRetryAfter);
      const status = this.knobs.gitFailureStatus ?? 502;
      return send(res, status, { message: status === 503 ? 'Service Unavailable' : 'Server Error' });
    }
    const fail = (message: string, type?: string) =>
      send(res, 200, { data: { updateRefs: null }, errors: [{ ...(type && { type }), path: ['updateRefs'], locations: [{ line: 1, column: 1 }], message }] });
    if (typeof request.query !== 'string' || !/\bupdateRefs\s*\(/.test(request.query))
      return send(res, 200, { errors: [{ message: 'The emulator serves only the updateRefs mutation.' }] });
    const { repositoryId, refUpdates } = request.variables ?? {};
    const repo = [...this.repos.values()].find((r) => Buffer.from(`Repository:${r.id}`).toString('base64') === repositoryId);
    if (!repo || (repo.private && !repo.collaborators.includes(login)))
      return fail(`Could not resolve to a node with the global id of '${String(repositoryId)}'`, 'NOT_FOUND');
    if (!repo.collaborators.includes(login)) return fail(`${login} does not have permission to update refs on ${repo.owner}/${repo.name}.`, 'FORBIDDEN');
    if (!Array.isArray(refUpdates) || refUpdates.length === 0) return fail('refUpdates must list at least one update');
    if (this.knobs.holdUpdateRefs) {
      this.knobs.heldUpdateRefs++;
      await this.knobs.holdUpdateRefs;
    }
    const git = new BareRepository(repo.path);
    const ZERO = '0'.repeat(40);
    const lines: string[] = [];
    const moved: { ref: string; before: string; after: string }[] = [];
    for (const u of refUpdates as { name?: unknown; afterOid?: unknown; beforeOid?: unknown; force?: unknown }[]) {
      if (typeof u.name !== 'string' || !(await git.validRef(u.name)) || typeof u.afterOid !== 'string' || !SHA_PATTERN.test(u.afterOid))
        return fail('Invalid ref update');
      const before = typeof u.beforeOid === 'string' && SHA_PATTERN.test(u.beforeOid) ? u.beforeOid : undefined;
      if (u.afterOid === ZERO) {
        lines.push(`delete ${u.name}${before ? ` ${before}` : ''}`);
        continue;
      }
      if (u.name.startsWith('refs/heads/') && this.isProtected(`${repo.owner}/${repo.name}`, u.name.slice('refs/heads/'.length)))
        return fail(`Protected branch update failed for ${u.name}.`, 'UNPROCESSABLE');
      if (!(await git.hasObject(u.afterOid))) return fail(`Could not resolve to an object with the oid ${u.afterOid}`);
      const from = before ?? (await git.resolveRef(u.name)) ?? ZERO;
      if (u.force !== true && from !== ZERO && from !== u.afterOid && !(await git.isAncestor(from, u.afterOid)))
        return fail(`Update of ${u.name} is not a fast forward`);
      lines.push(`update ${u.name} ${u.afterOid}${before ? ` ${before}` : ''}`);
      moved.push({ ref: u.name, before: from, after: u.afterOid });
    }
    if (!(await git.updateRefs(`${lines.join('\n')}\n`))) return fail('A ref was not where the update expected it; no ref was updated.');
    for (const move of moved) this.refMoved(repo, move.ref, move.before, move.after, login);
    return send(res, 200, { data: { updateRefs: { clientMutationId: null } } });
  }

  /** GET /compare/{base}...{head}: where head stands relative to base (ahead, behind, identical, diverged). */
  private async compare(git: BareRepository, links: GitLinks, basehead: string, res: http.ServerResponse): Promise<void> {
    const parts = basehead.split('...');
    if (parts.length !== 2) return send(res, 404, { message: 'Not Found' });
    const [base, head] = await Promise.all(parts.map((p) => git.resolveCommitish(p)));
    if (!base || !head) return send(res, 404, { message: 'Not Found' });
    const mergeBase = await git.mergeBase(base, head);
    if (!mergeBase) return send(res, 404, { message: `No common ancestor between ${parts[0]} and ${parts[1]}.` });
    const ahead = await git.revList(`${base}..${head}`);
    const behindBy = (await git.revList(`${head}..${base}`)).length;
    const status = ahead.length === 0 && behindBy === 0 ? 'identical' : behindBy === 0 ? 'ahead' : ahead.length === 0 ? 'behind' : 'diverged';
    const commits = await Promise.all(ahead.slice(-250).map(async (sha) => links.repoCommit((await git.commit(sha))!)));
    // The files head changes since the merge base, at most 300 (GitHub's own cap: a longer list is cut).
    const files = (await git.changedFiles(mergeBase, head)).slice(0, COMPARE_FILES_CAP);
    return send(res, 200, {
      url: `${links.api}/compare/${basehead}`,
      html_url: `${links.html}/compare/${basehead}`,
      permalink_url: `${links.html}/compare/${base}...${head}`,
      diff_url: `${links.html}/compare/${basehead}.diff`,
      patch_url: `${links.html}/compare/${basehead}.patch`,
      base_commit: links.repoCommit((await git.commit(base))!),
      merge_base_commit: links.repoCommit((await git.commit(mergeBase))!),
      status,
      ahead_by: ahead.length,
      behind_by: behindBy,
      total_commits: ahead.length,
      commits,
      files,
    });
  }

  /**
   * POST /merges: merges `head` (a branch or a commit) into the branch `base` with a merge commit
   * authored by the user, or answers 204 when base already contains head. 409 on a conflict; 404
   * when base or head does not exist.
   */
  private async merge(git: BareRepository, links: GitLinks, login: string, body: Record<string, unknown>, res: http.ServerResponse): Promise<void> {
    const { base, head, commit_message: message } = body;
    if (typeof base !== 'string' || typeof head !== 'string') return send(res, 422, { message: 'Invalid request.\n\n"base" and "head" are required.' });
    const baseRef = `refs/heads/${base}`;
    if (!(await git.validRef(baseRef))) return send(res, 404, { message: 'Base does not exist' });
    const headSha = await git.resolveCommitish(head);
    if (!headSha) return send(res, 404, { message: 'Head does not exist' });
    const identity = { name: login, email: `${this.users.get(login)?.id ?? 0}+${login}@users.noreply.emulator.test` };
    for (let attempt = 0; attempt < 5; attempt++) {
      const baseSha = await git.resolveRef(baseRef);
      if (!baseSha) return send(res, 404, { message: 'Base does not exist' });
      if (await git.isAncestor(headSha, baseSha)) return send(res, 204, undefined);
      const tree = await git.mergeTree(baseSha, headSha);
      if (!tree) return send(res, 409, { message: 'Merge conflict' });
      const merged = await git.commitTree(tree, [baseSha, headSha], typeof message === 'string' && message ? message : `Merge ${head} into ${base}`, identity);
      if (await git.updateRef(baseRef, merged, baseSha)) {
        const user = this.users.get(login);
        return send(res, 201, {
          ...links.repoCommit((await git.commit(merged))!),
          author: { login, id: user?.id ?? 0, type: 'User' },
          committer: { login, id: user?.id ?? 0, type: 'User' },
        });
      }
    }
    return send(res, 409, { message: 'Reference update failed' });
  }

  private gitlab(req: http.IncomingMessage, url: URL, path: string, res: http.ServerResponse): void {
    if (path === '/version') return send(res, 200, { version: '17.5.0', revision: 'emulator' });
    const token = req.headers['private-token'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    const login = typeof token === 'string' ? this.tokens.get(token) : undefined;
    if (!login) return send(res, 401, { message: '401 Unauthorized' });
    const user = this.users.get(login) as EmulatedUser;
    if (path === '/user') return send(res, 200, { id: user.id, username: user.login, name: user.login, state: 'active' });
    const project = path.match(/^\/projects\/([^/]+)(\/members\/all)?$/);
    if (project) {
      const key = decodeURIComponent(project[1]).toLowerCase();
      const repo = [...this.repos.values()].find((r) => `${r.owner}/${r.name}`.toLowerCase() === key || String(r.id) === key);
      if (!repo || (repo.private && !repo.collaborators.includes(login))) return send(res, 404, { message: '404 Project Not Found' });
      if (project[2]) {
        const page = paginate(repo.collaborators, url, res);
        res.setHeader('x-total', String(repo.collaborators.length));
        res.setHeader('x-total-pages', String(Math.max(1, Math.ceil(repo.collaborators.length / perPage(url)))));
        res.setHeader('x-page', url.searchParams.get('page') ?? '1');
        res.setHeader('x-per-page', String(perPage(url)));
        return send(
          res,
          200,
          page.map((c) => ({ id: this.users.get(c)?.id ?? 0, username: c, access_level: 30 })),
        );
      }
      return send(res, 200, {
        id: repo.id,
        name: repo.name,
        path: repo.name,
        path_with_namespace: `${repo.owner}/${repo.name}`,
        description: repo.description,
        default_branch: repo.defaultBranch,
        visibility: repo.private ? 'private' : 'public',
        namespace: { full_path: repo.owner, kind: 'user' },
        last_activity_at: lastCommitDate(repo.path),
        web_url: `${this.url}/${repo.owner}/${repo.name}`,
      });
    }
    return send(res, 404, { message: '404 Not Found' });
  }

  /** The browser pages and the token endpoint on the web host. */
  private web(method: string, url: URL, body: string, res: http.ServerResponse): void {
    if (method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const params = parseForm(body);
      if (params.client_id !== this.clientId || params.client_secret !== this.clientSecret)
        return send(res, 200, { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
      if (params.grant_type === 'refresh_token') {
        const login = this.tokens.get(params.refresh_token ?? '');
        if (!login) return send(res, 200, { error: 'bad_refresh_token', error_description: 'The refresh token passed is incorrect or expired.' });
        this.tokens.delete(params.refresh_token ?? '');
        return send(res, 200, this.tokenAnswer(login));
      }
      const code = this.codes.get(params.code ?? '');
      if (!code || code.used) return send(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      code.used = true;
      return send(res, 200, this.tokenAnswer(code.login));
    }
    // The authorize and install pages: the emulated user always agrees (tests call the callback themselves).
    const state = url.searchParams.get('state') ?? '';
    if (method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const target = new URL(url.searchParams.get('redirect_uri') || this.callbackUrl);
      target.search = new URLSearchParams({ code: this.issueCode(this.browserUser), state }).toString();
      return redirect(res, target.toString());
    }
    if (method === 'GET' && /^\/apps\/[^/]+\/installations\/new$/.test(url.pathname)) {
      const installation =
        [...this.installations.values()].find((i) => i.users.includes(this.browserUser)) ?? this.addInstallation(this.browserUser, [this.browserUser]);
      const target = new URL(this.callbackUrl);
      target.search = new URLSearchParams({
        code: this.issueCode(this.browserUser),
        installation_id: String(installation.id),
        setup_action: 'install',
        state,
      }).toString();
      return redirect(res, target.toString());
    }
    return send(res, 404, { message: 'Not Found' });
  }

  private tokenAnswer(login: string): object {
    const refresh = this.issueToken(login);
    return {
      access_token: this.issueToken(login),
      token_type: 'bearer',
      scope: '',
      expires_in: 28_800,
      refresh_token: refresh,
      refresh_token_expires_in: 15_897_600,
    };
  }

  private authenticate(req: http.IncomingMessage): string | undefined {
    const match = (req.headers.authorization ?? '').match(/^(?:token|bearer) (\S+)$/i);
    return match ? this.tokens.get(match[1]) : undefined;
  }

  private repositoryJson(repo: EmulatedRepository): object {
    const owner = this.users.get(repo.owner);
    const pushedAt = lastCommitDate(repo.path);
    return {
      id: repo.id,
      node_id: Buffer.from(`Repository:${repo.id}`).toString('base64'),
      name: repo.name,
      full_name: `${repo.owner}/${repo.name}`,
      private: repo.private,
      owner: { login: repo.owner, id: owner?.id ?? 0, type: 'User' },
      html_url: `${this.url}/${repo.owner}/${repo.name}`,
      description: repo.description,
      default_branch: repo.defaultBranch,
      visibility: repo.private ? 'private' : 'public',
      created_at: pushedAt,
      updated_at: pushedAt,
      pushed_at: pushedAt,
    };
  }
}

function installationJson(installation: EmulatedInstallation, account: EmulatedUser | undefined): object {
  return {
    id: installation.id,
    account: { login: installation.account, id: account?.id ?? 0, type: 'User' },
    target_type: 'User',
    repository_selection: 'all',
    permissions: { contents: 'read', metadata: 'read' },
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function runJson(run: EmulatedRun, repo: EmulatedRepository, owner: object, base: string): object {
  return {
    id: run.id,
    name: run.name,
    node_id: Buffer.from(`WorkflowRun:${run.id}`).toString('base64'),
    head_branch: repo.defaultBranch,
    head_sha: run.id.toString(16).padStart(40, '0'),
    path: `.github/workflows/${run.name.toLowerCase()}.yml`,
    display_title: `${run.name} #${run.runNumber}`,
    run_number: run.runNumber,
    event: run.event,
    status: 'completed',
    conclusion: run.conclusion,
    workflow_id: run.workflowId,
    url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}`,
    html_url: `${base}/${repo.owner}/${repo.name}/actions/runs/${run.id}`,
    jobs_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}/jobs`,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    run_attempt: run.runAttempt,
    run_started_at: run.runStartedAt,
    actor: owner,
    triggering_actor: owner,
    repository: { id: repo.id, name: repo.name, full_name: `${repo.owner}/${repo.name}`, owner, private: repo.private },
  };
}

function jobJson(job: EmulatedJob, run: EmulatedRun, repo: EmulatedRepository, base: string): object {
  const selfHosted = job.labels.includes('self-hosted');
  return {
    id: job.id,
    run_id: run.id,
    run_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}`,
    run_attempt: job.runAttempt,
    node_id: Buffer.from(`CheckRun:${job.id}`).toString('base64'),
    head_sha: run.id.toString(16).padStart(40, '0'),
    url: `${base}/repos/${repo.owner}/${repo.name}/actions/jobs/${job.id}`,
    html_url: `${base}/${repo.owner}/${repo.name}/actions/runs/${run.id}/job/${job.id}`,
    status: 'completed',
    conclusion: job.conclusion,
    created_at: job.startedAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    name: job.name,
    workflow_name: run.name,
    head_branch: repo.defaultBranch,
    labels: job.labels,
    runner_id: selfHosted ? 7 : 1,
    runner_name: selfHosted ? 'build-box-1' : 'GitHub Actions 1',
    runner_group_id: selfHosted ? 2 : 1,
    runner_group_name: selfHosted ? 'Default' : 'GitHub Actions',
    steps: [],
  };
}

function perPage(url: URL): number {
  return Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? PER_PAGE_DEFAULT) || PER_PAGE_DEFAULT));
}

/** One page of `items`, with GitHub's `Link` header (next, last, first, prev) when there are more pages. */
function paginate<T>(items: T[], url: URL, res: http.ServerResponse): T[] {
  const size = perPage(url);
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / size));
  const link = (p: number, rel: string) => {
    const target = new URL(url.toString());
    target.searchParams.set('page', String(p));
    target.searchParams.set('per_page', String(size));
    return `<${target.pathname}${target.search}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, 'prev'), link(1, 'first'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (links.length) res.setHeader('link', links.join(', '));
  return items.slice((page - 1) * size, page * size);
}

function initBareRepository(path: string, branch: string, description?: string): void {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Emulator',
    GIT_AUTHOR_EMAIL: 'emulator@example.com',
    GIT_COMMITTER_NAME: 'Emulator',
    GIT_COMMITTER_EMAIL: 'emulator@example.com',
  };
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', path, ...args], { env, input: '' })
      .toString()
      .trim();
  execFileSync('git', ['init', '--bare', '--quiet', path]);
  git('symbolic-ref', 'HEAD', `refs/heads/${branch}`);
  const tree = git('mktree');
  const commit = git('commit-tree', tree, '-m', 'Initial commit');
  git('update-ref', `refs/heads/${branch}`, commit);
  if (description !== undefined) writeFileSync(join(path, 'description'), `${description}\n`);
}

function lastCommitDate(path: string): string {
  const out = execFileSync('git', [
    '--git-dir',
    path,
    'for-each-ref',
    '--sort=-committerdate',
    '--count=1',
    '--format=%(committerdate:iso-strict)',
    'refs/heads',
  ])
    .toString()
    .trim();
  return (out ? new Date(out) : new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function parseForm(body: string): Record<string, string | undefined> {
  try {
    return JSON.parse(body) as Record<string, string>;
  } catch {
    return Object.fromEntries(new URLSearchParams(body));
  }
}

/** An app JWT as GitHub checks it: RS256 over header.payload with the app's key, `iss` the app id, not expired, at most 10 minutes long. */
function verifyAppJwt(jwt: string, app: { appId: string; publicKey: KeyObject }): boolean {
  const parts = jwt.split('.');
  if (parts.length !== 3) return false;
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString()) as { alg?: string };
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString()) as { iss?: unknown; iat?: number; exp?: number };
    if (header.alg !== 'RS256' || String(claims.iss) !== app.appId) return false;
    const now = Math.floor(Date.now() / 1000);
    if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number' || claims.exp <= now || claims.iat > now + 60 || claims.exp - claims.iat > 660)
      return false;
    return verifySignature('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), app.publicKey, Buffer.from(parts[2], 'base64url'));
  } catch {
    return false;
  }
}

/** GitHub's X-Hub-Signature-256 of a body. */
export function signature256(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  if (status === 204) return void res.writeHead(204).end();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function redirect(res: http.ServerResponse, location: string): void {
  res.writeHead(302, { location });
  res.end();
}

/** A commit id, full or abbreviated (the git data endpoints take either). */
const SHA_PATTERN = /^[0-9a-f]{7,40}$/;

interface Signature {
  name: string;
  email: string;
  date: string;
}

interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  message: string;
}

/** GitHub's compare lists at most this many files. */
const COMPARE_FILES_CAP = 300;
/** `git diff --name-status` letters as GitHub names file statuses. */
const DIFF_STATUS: Record<string, string> = { A: 'added', D: 'removed', M: 'modified', R: 'renamed', C: 'copied', T: 'changed' };

/**
 * The git CLI on one bare repository, for the git data endpoints. Refs given to it are always full
 * (`refs/...`) and commits hex, so nothing a caller sends can be read by git as an option.
 */
class BareRepository {
  constructor(private readonly path: string) {}

  async resolveRef(ref: string): Promise<string | null> {
    const { code, stdout } = await this.git(['rev-parse', '--verify', '--quiet', ref], [1]);
    return code === 0 ? stdout : null;
  }

  /** A branch name or a commit id, as the commit it names; null when there is none. */
  async resolveCommitish(name: string): Promise<string | null> {
    const rev = SHA_PATTERN.test(name) ? name : `refs/heads/${name}`;
    if (!SHA_PATTERN.test(name) && !(await this.validRef(rev))) return null;
    const { code, stdout } = await this.git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], [1, 128]);
    return code === 0 ? stdout : null;
  }

  async validRef(ref: string): Promise<boolean> {
    return ref.startsWith('refs/') && (await this.git(['check-ref-format', ref], [1])).code === 0;
  }

  async hasObject(sha: string): Promise<boolean> {
    return SHA_PATTERN.test(sha) && (await this.git(['cat-file', '-e', sha], [1, 128])).code === 0;
  }

  async objectType(sha: string): Promise<string> {
    return (await this.git(['cat-file', '-t', sha])).stdout;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await this.git(['merge-base', '--is-ancestor', ancestor, descendant], [1])).code === 0;
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    const { code, stdout } = await this.git(['merge-base', a, b], [1]);
    return code === 0 ? stdout : null;
  }

  /** `git diff -M` from `from` to `to` as GitHub's compare lists files: filename, status, previous_filename on a rename. */
  async changedFiles(from: string, to: string): Promise<{ filename: string; status: string; previous_filename?: string }[]> {
    const fields = (await this.git(['diff', '--name-status', '-z', '-M', from, to])).stdout.split('\0');
    const files: { filename: string; status: string; previous_filename?: string }[] = [];
    for (let i = 0; i < fields.length - 1;) {
      const code = fields[i++];
      const status = DIFF_STATUS[code[0]] ?? 'changed';
      if (code[0] === 'R' || code[0] === 'C') {
        files.push({ filename: fields[i + 1], status, previous_filename: fields[i] });
        i += 2;
      } else files.push({ filename: fields[i++], status });
    }
    return files;
  }

  /** Commits in `range` (`a..b`), oldest first. */
  async revList(range: string): Promise<string[]> {
    return (await this.git(['rev-list', '--reverse', range])).stdout.split('\n').filter(Boolean);
  }

  /** Moves `ref` to `sha` only if it is at `old` ('' = must not exist); false when it was not. */
  async updateRef(ref: string, sha: string, old: string): Promise<boolean> {
    return (await this.git(['update-ref', ref, sha, old], [1, 128])).code === 0;
  }

  /** One `git update-ref --stdin` transaction (all or nothing); false when git refused it. */
  updateRefs(input: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const child = spawn('git', ['--git-dir', this.path, 'update-ref', '--stdin'], {
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      child.on('error', reject);
      child.on('close', (code) => resolve(code === 0));
      child.stdin.end(input);
    });
  }

  async deleteRef(ref: string, old: string): Promise<boolean> {
    return (await this.git(['update-ref', '-d', ref, old], [1, 128])).code === 0;
  }

  /** The tree of merging `theirs` into `ours`, without a work tree; null on a conflict. */
  async mergeTree(ours: string, theirs: string): Promise<string | null> {
    const { code, stdout } = await this.git(['merge-tree', '--write-tree', '--no-messages', ours, theirs], [1]);
    return code === 0 ? stdout.split('\n')[0] : null;
  }

  async commitTree(tree: string, parents: string[], message: string, who: { name: string; email: string }): Promise<string> {
    const env = { GIT_AUTHOR_NAME: who.name, GIT_AUTHOR_EMAIL: who.email, GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email };
    return (await this.git(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message], [], env)).stdout;
  }

  async commit(sha: string): Promise<CommitInfo | null> {
    const { code, stdout } = await this.git(
      ['show', '-s', '--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B', `${sha}^{commit}`, '--'],
      [128],
    );
    if (code !== 0) return null;
    const [full, tree, parents, an, ae, ad, cn, ce, cd, message] = stdout.split('\0');
    return {
      sha: full,
      tree,
      parents: parents.split(' ').filter(Boolean),
      author: { name: an, email: ae, date: iso(Date.parse(ad)) },
      committer: { name: cn, email: ce, date: iso(Date.parse(cd)) },
      message: message.replace(/\n+$/, ''),
    };
  }

  private async git(args: string[], okCodes: number[] = [], env: Record<string, string> = {}): Promise<{ code: number; stdout: string }> {
    try {
      const { stdout } = await execFileAsync('git', ['--git-dir', this.path, ...args], { env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' } });
      return { code: 0, stdout: stdout.trim() };
    } catch (error) {
      const e = error as { code?: unknown; stdout?: string };
      if (typeof e.code === 'number' && okCodes.includes(e.code)) return { code: e.code, stdout: (e.stdout ?? '').trim() };
      throw error;
    }
  }
}

/** The URLs and JSON shapes GitHub gives refs and commits of one repository. */
class GitLinks {
  readonly api: string;
  readonly html: string;

  constructor(base: string, repo: EmulatedRepository) {
    this.api = `${base}/repos/${repo.owner}/${repo.name}`;
    this.html = `${base}/${repo.owner}/${repo.name}`;
  }

  refUrl(ref: string): string {
    return `${this.api}/git/${ref}`;
  }

  async ref(git: BareRepository, ref: string, sha: string): Promise<object> {
    const type = await git.objectType(sha);
    return { ref, node_id: Buffer.from(`Ref:${ref}`).toString('base64'), url: this.refUrl(ref), object: { sha, type, url: `${this.api}/git/${type}s/${sha}` } };
  }

  /** GET /git/commits/{sha}'s shape. */
  gitCommit(c: CommitInfo): object {
    return {
      sha: c.sha,
      node_id: Buffer.from(`Commit:${c.sha}`).toString('base64'),
      url: `${this.api}/git/commits/${c.sha}`,
      html_url: `${this.html}/commit/${c.sha}`,
      author: c.author,
      committer: c.committer,
      message: c.message,
      tree: { sha: c.tree, url: `${this.api}/git/trees/${c.tree}` },
      parents: c.parents.map((p) => ({ sha: p, url: `${this.api}/git/commits/${p}`, html_url: `${this.html}/commit/${p}` })),
      verification: UNSIGNED,
    };
  }

  /** The repository commit shape (compare, merges). */
  repoCommit(c: CommitInfo): object {
    return {
      sha: c.sha,
      node_id: Buffer.from(`Commit:${c.sha}`).toString('base64'),
      commit: {
        author: c.author,
        committer: c.committer,
        message: c.message,
        tree: { sha: c.tree, url: `${this.api}/git/trees/${c.tree}` },
        url: `${this.api}/git/commits/${c.sha}`,
        comment_count: 0,
        verification: UNSIGNED,
      },
      url: `${this.api}/commits/${c.sha}`,
      html_url: `${this.html}/commit/${c.sha}`,
      comments_url: `${this.api}/commits/${c.sha}/comments`,
      author: null,
      committer: null,
      parents: c.parents.map((p) => ({ sha: p, url: `${this.api}/commits/${p}`, html_url: `${this.html}/commit/${p}` })),
    };
  }
}

const UNSIGNED = { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null };
