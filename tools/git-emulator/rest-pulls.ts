/**
 * GitHub's REST API for a pull request: GET /repos/{o}/{r}/pulls/{n} (the merge queue reads its
 * title; an unknown PR is a 404), and what the merge queue does to a pull request once it landed it as new
 * commits (a squash or a rebase, which GitHub cannot see as the PR's merge): PATCH
 * /repos/{o}/{r}/pulls/{n} to close it and POST /repos/{o}/{r}/issues/{n}/comments to say where it
 * landed. Both need push access (a collaborator; else 403, as GitHub answers an integration
 * without pull-request or issue write permission); an unknown PR is a 404 (comments) and a 422
 * (update: GitHub's description declares no 404 there, its validation answers first). Closing an
 * open PR sends the `pull_request` `closed` webhook (not merged), as GitHub does.
 */
import { BareRepository } from './bare-git';
import { GithubJson } from './github-json';
import { fail, iso, jsonBody, type Route, type RouteContext, send } from './http';
import type { Pulls } from './pulls';
import type { EmulatorState } from './state';
import type { Webhooks } from './webhooks';

export class RestPulls {
  readonly routes: Route[] = [
    { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, auth: 'user', handle: (ctx, m) => this.get(ctx, m) },
    { method: 'PATCH', path: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, auth: 'user', handle: (ctx, m) => this.update(ctx, m) },
    { method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/, auth: 'user', handle: (ctx, m) => this.comment(ctx, m) },
  ];

  private readonly json: GithubJson;

  constructor(
    private readonly state: EmulatorState,
    private readonly pulls: Pulls,
    private readonly webhooks: Webhooks,
  ) {
    this.json = new GithubJson(state);
  }

  /** GET /repos/{owner}/{repo}/pulls/{pull_number}: a PR a webhook or a review made; 404 for any other, as GitHub answers an unknown PR. */
  private async get({ login, res }: RouteContext, match: RegExpMatchArray): Promise<void> {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    const pull = this.pulls.find(repo, login, Number(match[3]));
    if (!pull) return fail(res, 404, 'Not Found');
    const baseSha = (await new BareRepository(repo.path).resolveRef(`refs/heads/${repo.defaultBranch}`).catch(() => null)) ?? pull.headSha;
    return send(
      res,
      200,
      this.json.pullRequest(`${repo.owner}/${repo.name}`, this.json.repository(repo), {
        number: pull.number,
        title: pull.title,
        headSha: pull.headSha,
        baseRef: repo.defaultBranch,
        baseSha,
        closed: pull.state === 'closed',
        merged: false,
      }),
    );
  }

  /** PATCH /repos/{owner}/{repo}/pulls/{pull_number}: `state` (open or closed) and `title`. */
  private async update({ login, body: rawBody, res }: RouteContext, match: RegExpMatchArray): Promise<void> {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    if (!repo.collaborators.includes(login)) return fail(res, 403, 'Resource not accessible by integration');
    const pull = this.pulls.find(repo, login, Number(match[3]));
    if (!pull) return fail(res, 422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'missing', field: 'number' }] });
    const body = jsonBody(rawBody, res);
    if (!body) return;
    if (body.state !== undefined && body.state !== 'open' && body.state !== 'closed')
      return fail(res, 422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'invalid', field: 'state' }] });
    if (body.title !== undefined && (typeof body.title !== 'string' || !body.title.trim()))
      return fail(res, 422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'missing_field', field: 'title' }] });
    const closing = body.state === 'closed' && pull.state === 'open';
    if (body.state) pull.state = body.state;
    if (typeof body.title === 'string') pull.title = body.title;
    // GitHub announces the close (not merged) to the repository's webhooks, as for a close on its page.
    if (closing && this.state.webhook)
      void this.webhooks
        .pullRequest(`${repo.owner}/${repo.name}`, 'closed', { number: pull.number, headSha: pull.headSha, baseRef: repo.defaultBranch, merged: false })
        .catch(() => undefined);
    const baseSha = (await new BareRepository(repo.path).resolveRef(`refs/heads/${repo.defaultBranch}`).catch(() => null)) ?? pull.headSha;
    return send(
      res,
      200,
      this.json.pullRequest(`${repo.owner}/${repo.name}`, this.json.repository(repo), {
        number: pull.number,
        title: pull.title,
        headSha: pull.headSha,
        baseRef: repo.defaultBranch,
        baseSha,
        closed: pull.state === 'closed',
        merged: false,
      }),
    );
  }

  /** POST /repos/{owner}/{repo}/issues/{issue_number}/comments: a comment on the PR. */
  private comment({ login, body: rawBody, res }: RouteContext, match: RegExpMatchArray): void {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    if (!repo.collaborators.includes(login)) return fail(res, 403, 'Resource not accessible by integration');
    const pull = this.pulls.find(repo, login, Number(match[3]));
    if (!pull) return fail(res, 404, 'Not Found');
    const body = jsonBody(rawBody, res);
    if (!body) return;
    if (typeof body.body !== 'string' || !body.body)
      return fail(res, 422, 'Validation Failed', { errors: [{ resource: 'IssueComment', code: 'missing_field', field: 'body' }] });
    const id = this.state.nextId();
    const at = iso(Date.now());
    pull.comments.push({ id, by: login, body: body.body, at });
    const api = `${this.state.url}/repos/${repo.owner}/${repo.name}`;
    res.setHeader('location', `${api}/issues/comments/${id}`);
    return send(res, 201, {
      id,
      node_id: Buffer.from(`IssueComment:${id}`).toString('base64'),
      url: `${api}/issues/comments/${id}`,
      html_url: `${this.state.url}/${repo.owner}/${repo.name}/pull/${pull.number}#issuecomment-${id}`,
      body: body.body,
      user: this.json.user(login),
      created_at: at,
      updated_at: at,
      issue_url: `${api}/issues/${pull.number}`,
      author_association: repo.owner === login ? 'OWNER' : 'COLLABORATOR',
    });
  }
}
