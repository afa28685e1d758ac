/**
 * GitHub's REST API for what the merge queue does to a pull request once it landed it as new
 * commits (a squash or a rebase, which GitHub cannot see as the PR's merge): PATCH
 * /repos/{o}/{r}/pulls/{n} to close it (the comment saying where it landed is issues.ts's POST
 * /repos/{o}/{r}/issues/{n}/comments). It needs push access (a collaborator; else 403, as GitHub answers an integration
 * without pull-request or issue write permission); an unknown PR is a 404 (comments) and a 422
 * (update: GitHub's description declares no 404 there, its validation answers first). Closing an
 * open PR sends the `pull_request` `closed` webhook (not merged), as GitHub does.
 */
import { fail, jsonBody, type Route, type RouteContext, send } from './http';
import type { Pulls } from './pulls';
import type { EmulatorState } from './state';
import type { Webhooks } from './webhooks';

export class RestPulls {
  readonly routes: Route[] = [{ method: 'PATCH', path: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, auth: 'user', handle: (ctx, m) => this.update(ctx, m) }];

  constructor(
    private readonly state: EmulatorState,
    private readonly pulls: Pulls,
    private readonly webhooks: Webhooks,
  ) {}

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
    return send(res, 200, await this.webhooks.pullJson(`${repo.owner}/${repo.name}`, pull));
  }
}
