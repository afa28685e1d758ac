/**
 * Webhooks: building GitHub's deliveries (check_run, status, pull_request, issue_comment, push), signing them and
 * posting them to the configured URL, recorded for tests to read and redeliver.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { BareRepository } from './bare-git';
import { EMULATOR_APP_ID, GithubJson } from './github-json';
import { fail, iso, paginate, type Route, type RouteContext, send } from './http';
import type { EmulatedComment, EmulatedPull, Pulls } from './pulls';
import type { EmulatedDelivery, EmulatedRepository, EmulatorState } from './state';

/** GitHub lists at most this many commits in a push payload. */
const MAX_PUSH_COMMITS = 2048;
const node = (kind: string, id: number | string) => Buffer.from(`${kind}:${id}`).toString('base64');

/** GitHub's X-Hub-Signature-256 of a body. */
export function signature256(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** GitHub's legacy X-Hub-Signature (HMAC SHA-1), sent beside the SHA-256 one. */
function signatureSha1(body: string, secret: string): string {
  return `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`;
}

/** One annotation of a check run, as CI writes it (POST/PATCH check-runs `output.annotations`). */
export interface EmulatedAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
  title?: string;
  raw_details?: string;
}

export class Webhooks {
  /** The annotations of the check runs `checkRun` sent, by check run id (GET .../check-runs/{id}/annotations). */
  private readonly annotations = new Map<number, { repository: string; sha: string; list: EmulatedAnnotation[] }>();

  /** GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations, paginated as GitHub's (30 a page, per_page to 100). */
  readonly routes: Route[] = [
    {
      method: 'GET',
      path: /^\/repos\/([^/]+)\/([^/]+)\/check-runs\/(\d+)\/annotations$/,
      auth: 'user',
      handle: (ctx, m) => this.listAnnotations(ctx, m),
    },
  ];

  /** The id of the emulator's one webhook (X-GitHub-Hook-ID). */
  readonly hookId = 470_000_000 + randomBytes(2).readUInt16BE();
  /** Hookshot's version in the User-Agent, hex as GitHub's. */
  private readonly hookshot = randomBytes(4).toString('hex').slice(0, 7);
  private readonly json: GithubJson;
  /** The pushes refMoved sends, chained in order. */
  private pushes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly state: EmulatorState,
    private readonly pulls?: Pulls,
  ) {
    this.json = new GithubJson(state);
  }

  /**
   * Sends a webhook delivery to `webhook.url`, signed with `webhook.secret` (or `options.secret`,
   * or the exact `options.signature`, or unsigned with `signature: null`), and records it.
   */
  async deliver(
    event: string,
    payload: Record<string, unknown>,
    options: { secret?: string; signature?: string | null; id?: string } = {},
  ): Promise<EmulatedDelivery> {
    const webhook = this.state.webhook;
    if (!webhook) throw new Error('the emulator has no webhook configured');
    const installationId = webhook.installationId ?? this.appInstallationOf(payload);
    const full = installationId !== undefined ? { ...payload, installation: { id: installationId, node_id: node('Installation', installationId) } } : payload;
    const body = JSON.stringify(full);
    const secret = options.secret ?? (webhook.appSecret !== undefined && installationId !== undefined ? webhook.appSecret : webhook.secret);
    const signed = options.signature === undefined;
    const signature = signed ? signature256(body, secret) : options.signature;
    return this.post({
      id: options.id ?? randomUUID(),
      event,
      body,
      signature: signature ?? '',
      ...(signed && { signatureSha1: signatureSha1(body, secret) }),
      status: 0,
      response: '',
    });
  }

  /** Sends a recorded delivery again, byte for byte with its id (GitHub's "Redeliver"). */
  redeliver(id: string): Promise<EmulatedDelivery> {
    const original = this.state.deliveries.find((d) => d.id === id);
    if (!original) throw new Error(`no delivery ${id}`);
    return this.post({ ...original, status: 0, response: '' });
  }

  /** CI finished on `sha`: a check run `name` completed with `conclusion`, announced by a `check_run` webhook. */
  checkRunCompleted(
    repository: string,
    sha: string,
    name: string,
    conclusion: 'success' | 'failure' | 'neutral' | 'cancelled' | 'timed_out' | 'skipped',
    detailsUrl?: string,
    app: { id: number; slug: string } = { id: 1, slug: 'ci' },
  ): Promise<EmulatedDelivery> {
    return this.checkRun(repository, sha, name, { conclusion, detailsUrl, app });
  }

  /**
   * A check run `name` on `sha`: `created` in progress (CI started: `conclusion` absent), or
   * `completed` with `conclusion` (`id` and `startedAt`: those of the run it completes, as GitHub
   * sends one run's events).
   */
  async checkRun(
    repository: string,
    sha: string,
    name: string,
    run: {
      conclusion?: 'success' | 'failure' | 'neutral' | 'cancelled' | 'timed_out' | 'skipped';
      detailsUrl?: string;
      app?: { id: number; slug: string };
      id?: number;
      startedAt?: string;
      output?: { title: string; summary: string; text?: string };
      /** The run's annotations (kept for GET .../annotations; the payload counts them). */
      annotations?: EmulatedAnnotation[];
    },
  ): Promise<EmulatedDelivery> {
    const { repo, json } = this.repoRef(repository);
    const id = run.id ?? this.state.nextId();
    if (run.annotations) this.annotations.set(id, { repository, sha, list: run.annotations });
    const annotationsCount = this.annotations.get(id)?.list.length ?? 0;
    const now = iso(Date.now());
    const app = run.app ?? { id: 1, slug: 'ci' };
    const appJson = this.json.app(app.slug, app.id);
    const api = `${this.state.url}/repos/${repository}`;
    const completed = run.conclusion !== undefined;
    const status = completed ? 'completed' : 'in_progress';
    const conclusion = run.conclusion ?? null;
    return this.deliver('check_run', {
      action: completed ? 'completed' : 'created',
      check_run: {
        id,
        node_id: node('CheckRun', id),
        head_sha: sha,
        external_id: '',
        url: `${api}/check-runs/${id}`,
        html_url: `${this.state.url}/${repository}/runs/${id}`,
        details_url: run.detailsUrl ?? `https://ci.example.test/${sha.slice(0, 12)}`,
        status,
        conclusion,
        started_at: run.startedAt ?? now,
        completed_at: completed ? now : null,
        output: {
          title: run.output?.title ?? null,
          summary: run.output?.summary ?? null,
          text: run.output?.text ?? null,
          annotations_count: annotationsCount,
          annotations_url: `${api}/check-runs/${id}/annotations`,
        },
        name,
        check_suite: {
          id: id + 1,
          node_id: node('CheckSuite', id + 1),
          head_branch: null,
          head_sha: sha,
          status,
          conclusion,
          url: `${api}/check-suites/${id + 1}`,
          before: null,
          after: sha,
          pull_requests: [],
          app: appJson,
          created_at: now,
          updated_at: now,
        },
        app: appJson,
        pull_requests: [],
      },
      repository: json,
      sender: this.json.user(repo?.owner ?? repository.split('/')[0]),
    });
  }

  private listAnnotations({ login, url, res }: RouteContext, match: RegExpMatchArray): void {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    const run = this.annotations.get(Number(match[3]));
    if (!run || run.repository.toLowerCase() !== `${repo.owner}/${repo.name}`.toLowerCase()) return fail(res, 404, 'Not Found');
    const blob = `${this.state.url}/${repo.owner}/${repo.name}/blob/${run.sha}`;
    return send(
      res,
      200,
      paginate(run.list, url, res).map((a) => ({
        path: a.path,
        blob_href: `${blob}/${a.path}`,
        start_line: a.start_line,
        end_line: a.end_line,
        start_column: null,
        end_column: null,
        annotation_level: a.annotation_level,
        title: a.title ?? null,
        message: a.message,
        raw_details: a.raw_details ?? null,
      })),
    );
  }

  /** A commit status on `sha` (what a CI using the statuses API sends). */
  async commitStatus(repository: string, sha: string, context: string, state: 'success' | 'failure' | 'error' | 'pending'): Promise<EmulatedDelivery> {
    const { repo, json } = this.repoRef(repository);
    const now = iso(Date.now());
    const id = this.state.nextId();
    const info = repo ? await new BareRepository(repo.path).commit(sha).catch(() => null) : null;
    const api = `${this.state.url}/repos/${repository}`;
    const signature = { name: 'Emulator', email: 'emulator@example.com', date: now };
    const branches = repo ? await new BareRepository(repo.path).branchesContaining(sha).catch(() => []) : [];
    return this.deliver('status', {
      id,
      sha,
      name: repository,
      target_url: `https://ci.example.test/${sha.slice(0, 12)}`,
      avatar_url: null,
      context,
      description: null,
      state,
      commit: {
        sha,
        node_id: node('Commit', sha),
        commit: {
          author: info?.author ?? signature,
          committer: info?.committer ?? signature,
          message: info?.message ?? '',
          tree: { sha: info?.tree ?? sha, url: `${api}/git/trees/${info?.tree ?? sha}` },
          url: `${api}/git/commits/${sha}`,
          comment_count: 0,
          verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
        },
        url: `${api}/commits/${sha}`,
        html_url: `${this.state.url}/${repository}/commit/${sha}`,
        comments_url: `${api}/commits/${sha}/comments`,
        author: null,
        committer: null,
        parents: (info?.parents ?? []).map((p) => ({ sha: p, url: `${api}/commits/${p}`, html_url: `${this.state.url}/${repository}/commit/${p}` })),
      },
      branches: branches.slice(0, 10).map((b) => ({ name: b.name, commit: { sha: b.sha, url: `${api}/commits/${b.sha}` }, protected: false })),
      created_at: now,
      updated_at: now,
      repository: json,
      sender: this.json.user(repo?.owner ?? repository.split('/')[0]),
    });
  }

  /**
   * A pull request event: `opened`, `synchronize` (a new head was pushed; `beforeSha` the head
   * before), `edited` (`title` the new title; `changes.title.from` the one before, when it changed)
   * or `closed`. `title` sets the PR's title (pulls.ts), as GET .../pulls/{n} serves it.
   */
  async pullRequest(
    repository: string,
    action: 'synchronize' | 'closed' | 'opened' | 'edited',
    pr: { number: number; headSha: string; baseRef: string; merged?: boolean; beforeSha?: string; title?: string },
  ): Promise<EmulatedDelivery> {
    const previous = this.pulls?.titleOf(repository, pr.number) ?? `Pull request #${pr.number}`;
    const title = pr.title ?? previous;
    // The PR's head as GraphQL and REST report it moves with the event (and its title with `title`).
    const pull = this.pulls?.update(repository, pr.number, {
      baseRef: pr.baseRef,
      title,
      ...(action !== 'closed' && { headSha: pr.headSha }),
      ...(action === 'closed' && { state: 'closed' as const, merged: pr.merged ?? false }),
      ...(action === 'opened' && { state: 'open' as const }),
    });
    if (pull && action !== 'closed') pull.headSha = pr.headSha;
    const json = await this.pullJson(repository, pull ?? { ...this.detachedPull(pr), title });
    const { json: repoJson } = this.repoRef(repository);
    // GitHub's `synchronize` names the head before and after the push.
    const before = pr.beforeSha ?? (json.base as { sha: string }).sha;
    return this.deliver('pull_request', {
      action,
      number: pr.number,
      ...(action === 'synchronize' && { before, after: pr.headSha }),
      ...(action === 'edited' && { changes: title !== previous ? { title: { from: previous } } : {} }),
      pull_request: { ...json, head: { ...(json.head as object), sha: pr.headSha } },
      repository: repoJson,
      sender: this.json.user(repository.split('/')[0]),
    });
  }

  /** `login` added (`labeled`) or removed (`unlabeled`) `label` on PR `number`, as GitHub announces it. */
  async pullRequestLabel(repository: string, action: 'labeled' | 'unlabeled', number: number, label: string, login: string): Promise<EmulatedDelivery> {
    const pull = this.pulls?.known(repository, number);
    if (!pull) throw new Error(`no pull request ${repository}#${number}`);
    const { json } = this.repoRef(repository);
    return this.deliver('pull_request', {
      action,
      number,
      pull_request: await this.pullJson(repository, pull),
      label: this.json.label(repository, label),
      repository: json,
      sender: this.json.user(login),
    });
  }

  /** `comment` was written on PR `number` (an issue comment on a pull request, as GitHub announces it). */
  async issueCommentCreated(repository: string, number: number, comment: EmulatedComment): Promise<EmulatedDelivery> {
    const pull = this.pulls?.known(repository, number);
    if (!pull) throw new Error(`no pull request ${repository}#${number}`);
    const { json } = this.repoRef(repository);
    return this.deliver('issue_comment', {
      action: 'created',
      issue: this.issueJson(repository, pull),
      comment: this.commentJson(repository, number, comment),
      repository: json,
      sender: this.json.user(comment.by),
    });
  }

  /** A PR as REST (`pull-request`) and the `pull_request` webhooks show it. */
  async pullJson(repository: string, pull: EmulatedPull): Promise<Record<string, unknown>> {
    const { repo, json } = this.repoRef(repository);
    const owner = repo?.owner ?? repository.split('/')[0];
    const baseSha = (repo && (await new BareRepository(repo.path).resolveRef(`refs/heads/${pull.baseRef}`).catch(() => null))) ?? pull.headSha;
    const api = `${this.state.url}/repos/${repository}`;
    const html = `${this.state.url}/${repository}`;
    const id = 100_000_000 + pull.number;
    const closed = pull.state === 'closed';
    const merged = closed && pull.merged;
    const side = (ref: string, sha: string) => ({ label: `${owner}:${ref}`, ref, sha, user: this.json.user(owner), repo: json });
    const link = (href: string) => ({ href });
    const closedAt = closed ? pull.updatedAt : null;
    return {
      url: `${api}/pulls/${pull.number}`,
      id,
      node_id: node('PullRequest', id),
      html_url: `${html}/pull/${pull.number}`,
      diff_url: `${html}/pull/${pull.number}.diff`,
      patch_url: `${html}/pull/${pull.number}.patch`,
      issue_url: `${api}/issues/${pull.number}`,
      number: pull.number,
      state: pull.state,
      locked: false,
      title: pull.title,
      user: this.json.user(pull.author ?? owner),
      body: null,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: closedAt,
      merged_at: merged ? closedAt : null,
      merge_commit_sha: null,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      labels: pull.labels.map((l) => this.json.label(repository, l)),
      milestone: null,
      draft: pull.draft,
      commits_url: `${api}/pulls/${pull.number}/commits`,
      review_comments_url: `${api}/pulls/${pull.number}/comments`,
      review_comment_url: `${api}/pulls/comments{/number}`,
      comments_url: `${api}/issues/${pull.number}/comments`,
      statuses_url: `${api}/statuses/${pull.headSha}`,
      head: side(`pr-${pull.number}`, pull.headSha),
      base: side(pull.baseRef, baseSha),
      _links: {
        self: link(`${api}/pulls/${pull.number}`),
        html: link(`${html}/pull/${pull.number}`),
        issue: link(`${api}/issues/${pull.number}`),
        comments: link(`${api}/issues/${pull.number}/comments`),
        review_comments: link(`${api}/pulls/${pull.number}/comments`),
        review_comment: link(`${api}/pulls/comments{/number}`),
        commits: link(`${api}/pulls/${pull.number}/commits`),
        statuses: link(`${api}/statuses/${pull.headSha}`),
      },
      author_association: (pull.author ?? owner) === owner ? 'OWNER' : 'COLLABORATOR',
      auto_merge: null,
      active_lock_reason: null,
      merged,
      mergeable: null,
      rebaseable: null,
      mergeable_state: 'unknown',
      merged_by: merged ? this.json.user(owner) : null,
      comments: pull.comments.length,
      review_comments: 0,
      maintainer_can_modify: false,
      commits: 1,
      additions: 0,
      deletions: 0,
      changed_files: 0,
    };
  }

  /** A PR as the issues API and `issue_comment` webhooks show it (an issue with `pull_request`). */
  issueJson(repository: string, pull: EmulatedPull): Record<string, unknown> {
    const { repo } = this.repoRef(repository);
    const owner = repo?.owner ?? repository.split('/')[0];
    const api = `${this.state.url}/repos/${repository}`;
    const html = `${this.state.url}/${repository}`;
    const id = 200_000_000 + pull.number;
    const closed = pull.state === 'closed';
    const author = pull.author ?? owner;
    return {
      url: `${api}/issues/${pull.number}`,
      repository_url: api,
      labels_url: `${api}/issues/${pull.number}/labels{/name}`,
      comments_url: `${api}/issues/${pull.number}/comments`,
      events_url: `${api}/issues/${pull.number}/events`,
      html_url: `${html}/pull/${pull.number}`,
      id,
      node_id: node('PullRequest', 100_000_000 + pull.number),
      number: pull.number,
      title: pull.title,
      user: this.json.user(author),
      labels: pull.labels.map((l) => this.json.label(repository, l)),
      state: pull.state,
      locked: false,
      assignee: null,
      assignees: [],
      milestone: null,
      comments: pull.comments.length,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: closed ? pull.updatedAt : null,
      author_association: author === owner ? 'OWNER' : 'COLLABORATOR',
      active_lock_reason: null,
      draft: pull.draft,
      pull_request: {
        url: `${api}/pulls/${pull.number}`,
        html_url: `${html}/pull/${pull.number}`,
        diff_url: `${html}/pull/${pull.number}.diff`,
        patch_url: `${html}/pull/${pull.number}.patch`,
        merged_at: closed && pull.merged ? pull.updatedAt : null,
      },
      body: null,
      reactions: this.json.reactionRollup(`${api}/issues/${pull.number}/reactions`, []),
      timeline_url: `${api}/issues/${pull.number}/timeline`,
      performed_via_github_app: null,
      state_reason: closed ? 'completed' : null,
    };
  }

  /** An issue comment (`issue-comment`). */
  commentJson(repository: string, number: number, comment: EmulatedComment): Record<string, unknown> {
    const api = `${this.state.url}/repos/${repository}`;
    const { repo } = this.repoRef(repository);
    const owner = repo?.owner ?? repository.split('/')[0];
    return {
      url: `${api}/issues/comments/${comment.id}`,
      html_url: `${this.state.url}/${repository}/pull/${number}#issuecomment-${comment.id}`,
      issue_url: `${api}/issues/${number}`,
      id: comment.id,
      node_id: node('IssueComment', comment.id),
      user: this.json.user(comment.by),
      created_at: comment.at,
      updated_at: comment.at,
      author_association: comment.by === owner ? 'OWNER' : repo?.collaborators.includes(comment.by) ? 'COLLABORATOR' : 'NONE',
      body: comment.body,
      reactions: this.json.reactionRollup(`${api}/issues/comments/${comment.id}/reactions`, comment.reactions),
      performed_via_github_app: comment.by.endsWith('[bot]') ? this.json.app(this.state.appSlug, EMULATOR_APP_ID) : null,
    };
  }

  /** A PR the emulator holds no record of (a test sends its events only): made from the event's fields. */
  private detachedPull(pr: { number: number; headSha: string; baseRef: string; merged?: boolean }): EmulatedPull {
    const now = iso(Date.now());
    return {
      number: pr.number,
      headSha: pr.headSha,
      reviews: [],
      title: `Pull request #${pr.number}`,
      state: 'open',
      merged: pr.merged ?? false,
      draft: false,
      baseRef: pr.baseRef,
      labels: [],
      comments: [],
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * A push to a branch (sent by itself when the API moves a ref; a test sends one for a push from
   * outside): the commits `before..after` (at most 2,048, each with its added, removed and modified
   * files), `head_commit`, `created`/`deleted`/`forced`, as GitHub sends it. `options.commits`: that
   * many made-up entries instead (GitHub lists up to 2,048), each shaped as GitHub writes them, the
   * last one `after` (a large push without building its history).
   */
  async push(
    repository: string,
    ref: string,
    before: string,
    after: string,
    pusher = 'someone',
    options: { commits?: number } = {},
  ): Promise<EmulatedDelivery> {
    const { repo, json } = this.repoRef(repository, true);
    const zero = /^0+$/;
    const created = zero.test(before);
    const deleted = zero.test(after);
    const git = repo ? new BareRepository(repo.path) : undefined;
    const shas = !git || deleted || options.commits !== undefined ? [] : created ? [after] : await git.revList(`${before}..${after}`).catch(() => [after]);
    const commits =
      options.commits !== undefined
        ? Array.from({ length: options.commits }, (_, i) => this.pushedCommit(repository, i, i === (options.commits ?? 0) - 1 ? after : undefined))
        : git
          ? (await Promise.all(shas.slice(-MAX_PUSH_COMMITS).map((sha) => this.pushCommit(git, repository, sha)))).filter((c) => c !== null)
          : [];
    const headCommit = deleted ? null : (commits.at(-1) ?? (git ? await this.pushCommit(git, repository, after) : null));
    const forced = !created && !deleted && !!git && !(await git.isAncestor(before, after).catch(() => true));
    const user = this.state.users.get(pusher);
    return this.deliver('push', {
      ref,
      before,
      after,
      repository: json,
      pusher: { name: pusher, email: user ? `${user.id}+${pusher}@users.noreply.emulator.test` : null },
      sender: this.json.user(pusher),
      created,
      deleted,
      forced,
      base_ref: null,
      compare: `${this.state.url}/${repository}/compare/${created ? after.slice(0, 12) : before.slice(0, 12)}...${after.slice(0, 12)}`,
      commits,
      head_commit: headCommit,
    });
  }

  /** One made-up entry of a push's `commits`, of about the size GitHub sends (a short message, a few paths). */
  private pushedCommit(repository: string, i: number, sha?: string): Record<string, unknown> {
    const id = sha ?? createHmac('sha1', repository).update(String(i)).digest('hex');
    const person = { name: 'Mona Octocat', email: 'mona@users.noreply.github.com', username: 'mona' };
    return {
      id,
      tree_id: createHmac('sha1', 'tree').update(id).digest('hex'),
      distinct: true,
      message: `Change ${i}: adjust the handling of case ${i} in the service layer\n\nSigned-off-by: Mona Octocat <mona@users.noreply.github.com>`,
      timestamp: new Date(Date.now() - (2_000 - i) * 60_000).toISOString(),
      url: `https://github.com/${repository}/commit/${id}`,
      author: person,
      committer: person,
      added: i % 5 === 0 ? [`src/modules/feature-${i}/handler-${i}.ts`] : [],
      removed: [],
      modified: [`src/modules/service/case-${i % 97}.ts`, `test/service/case-${i % 97}.spec.ts`],
    };
  }

  /** With the App's secret configured: the installation on the owner of the payload's repository, if any. */
  private appInstallationOf(payload: Record<string, unknown>): number | undefined {
    if (this.state.webhook?.appSecret === undefined) return undefined;
    const owner = String((payload.repository as { owner?: { login?: string } } | undefined)?.owner?.login ?? '').toLowerCase();
    for (const installation of this.state.installations.values()) if (installation.account.toLowerCase() === owner) return installation.id;
    return undefined;
  }

  /** A commit as push payloads list it. */
  private async pushCommit(git: BareRepository, repository: string, sha: string): Promise<Record<string, unknown> | null> {
    const info = await git.commit(sha).catch(() => null);
    if (!info) return null;
    const files = await git.commitFiles(sha).catch(() => ({ added: [], removed: [], modified: [] }));
    const person = (p: { name: string; email: string; date: string }) => ({ name: p.name, email: p.email, date: p.date });
    return {
      id: info.sha,
      tree_id: info.tree,
      distinct: true,
      message: info.message,
      timestamp: info.committer.date,
      url: `${this.state.url}/${repository}/commit/${info.sha}`,
      author: person(info.author),
      committer: person(info.committer),
      ...files,
    };
  }

  /** Records a ref the API moved and, as GitHub, sends a push event for every branch change, whoever made it (the queue's own lands too): created, moved or deleted. */
  refMoved(repo: EmulatedRepository, ref: string, before: string, after: string, by: string): void {
    const repository = `${repo.owner}/${repo.name}`;
    this.state.refMoves.push({ repository, ref, sha: after, by });
    for (const listener of this.state.refListeners) listener({ repository, ref, before, after, by });
    if (!this.state.webhook || !ref.startsWith('refs/heads/') || before === after) return;
    // One after the other, in the order the branches changed (building a push reads git first, so
    // a deletion's would otherwise overtake the merge's before it).
    this.pushes = this.pushes.then(() => this.push(repository, ref, before, after, by)).catch(() => undefined);
  }

  /** The payload's `repository` (a push's carries `created_at`/`pushed_at` as epoch seconds, as GitHub's does). */
  private repoRef(repository: string, push = false): { repo: EmulatedRepository | undefined; json: Record<string, unknown> } {
    const repo = this.state.repos.get(repository.toLowerCase());
    if (!repo) {
      const [owner, name] = repository.split('/');
      return { repo, json: { id: 0, full_name: repository, name, owner: { login: owner } } };
    }
    const json = this.json.repository(repo);
    if (!push) return { repo, json };
    const seconds = (v: unknown) => Math.floor(Date.parse(String(v)) / 1000);
    return {
      repo,
      json: { ...json, created_at: seconds(json.created_at), pushed_at: seconds(json.pushed_at), stargazers: 0, master_branch: repo.defaultBranch },
    };
  }

  private async post(delivery: EmulatedDelivery): Promise<EmulatedDelivery> {
    const target = this.state.webhook as { url: string };
    // The hook's target: the app for an app's deliveries (they carry `installation`), else the repository's own hook.
    const payload = JSON.parse(delivery.body) as { installation?: unknown; repository?: { id?: unknown } };
    const hookTarget = payload.installation
      ? ['integration', this.state.app?.appId ?? String(EMULATOR_APP_ID)]
      : ['repository', String(payload.repository?.id ?? 0)];
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `GitHub-Hookshot/${this.hookshot}`,
      'x-github-event': delivery.event,
      'x-github-delivery': delivery.id,
      'x-github-hook-id': String(this.hookId),
      'x-github-hook-installation-target-type': hookTarget[0],
      'x-github-hook-installation-target-id': hookTarget[1],
    };
    if (delivery.signature) headers['x-hub-signature-256'] = delivery.signature;
    if (delivery.signatureSha1) headers['x-hub-signature'] = delivery.signatureSha1;
    const res = await fetch(target.url, { method: 'POST', headers, body: delivery.body });
    delivery.status = res.status;
    delivery.response = await res.text();
    this.state.deliveries.push(delivery);
    return delivery;
  }
}
