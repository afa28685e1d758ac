/**
 * GitHub's REST API for a pull request's conversation: GET /repos/{o}/{r}/pulls/{n}, the comments
 * and labels of its issue (POST .../issues/{n}/comments, POST .../issues/{n}/labels, DELETE
 * .../issues/{n}/labels/{name}), reactions to a comment (POST .../issues/comments/{id}/reactions),
 * and a person's permission (GET .../collaborators/{username}/permission). A comment or a label
 * change sends the webhook GitHub sends for it (`issue_comment` created, `pull_request`
 * labeled/unlabeled), with the caller as its sender.
 */
import { fail, iso, jsonBody, type Route, type RouteContext, send } from './http';
import { GithubJson } from './github-json';
import type { Pulls } from './pulls';
import type { EmulatorState } from './state';
import type { Webhooks } from './webhooks';

const REACTIONS = ['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'];
/** GitHub's legacy `permission` for each role (maintain reads as write, triage as read). */
const LEGACY_PERMISSION: Record<string, string> = { admin: 'admin', maintain: 'write', write: 'write', triage: 'read', read: 'read', none: 'none' };

export class Issues {
  readonly routes: Route[] = (
    [
      { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, auth: 'user', handle: (ctx, m) => this.getPull(ctx, m) },
      { method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/, auth: 'user', handle: (ctx, m) => this.comment(ctx, m) },
      { method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)\/reactions$/, auth: 'user', handle: (ctx, m) => this.react(ctx, m) },
      { method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/labels$/, auth: 'user', handle: (ctx, m) => this.addLabels(ctx, m) },
      { method: 'DELETE', path: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/labels\/([^/]+)$/, auth: 'user', handle: (ctx, m) => this.removeLabel(ctx, m) },
      {
        method: 'GET',
        path: /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/,
        auth: 'user',
        handle: (ctx, m) => this.permission(ctx, m),
      },
    ] satisfies Route[]
  ).map((route) => ({ ...route, handle: (ctx: RouteContext, m: RegExpMatchArray) => (this.failing(ctx) ? undefined : route.handle(ctx, m)) }));

  private readonly json: GithubJson;

  constructor(
    private readonly state: EmulatorState,
    private readonly pulls: Pulls,
    private readonly webhooks: Webhooks,
  ) {
    this.json = new GithubJson(state);
  }

  /** knobs.conversationFailures: this call answers 502 (a transient provider failure). */
  private failing({ res }: RouteContext): boolean {
    if (this.state.knobs.conversationFailures <= 0) return false;
    this.state.knobs.conversationFailures--;
    fail(res, 502, 'Server Error');
    return true;
  }

  /** The repository and PR of a route, or a 404 answered (a repository the caller cannot see, a PR it does not have). */
  private target({ login, res }: RouteContext, match: RegExpMatchArray) {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return void fail(res, 404, 'Not Found');
    const repository = `${repo.owner}/${repo.name}`;
    const pull = this.pulls.known(repository, Number(match[3]));
    if (!pull) return void fail(res, 404, 'Not Found');
    return { repo, repository, pull };
  }

  /** GET /repos/{owner}/{repo}/pulls/{pull_number}. */
  private async getPull(ctx: RouteContext, match: RegExpMatchArray): Promise<void> {
    const found = this.target(ctx, match);
    if (!found) return;
    send(ctx.res, 200, await this.webhooks.pullJson(found.repository, found.pull));
  }

  /** POST /repos/{owner}/{repo}/issues/{issue_number}/comments: anyone who can see a public repository comments (a private one: a collaborator). */
  private async comment(ctx: RouteContext, match: RegExpMatchArray): Promise<void> {
    const found = this.target(ctx, match);
    if (!found) return;
    const body = jsonBody(ctx.body, ctx.res);
    if (!body) return;
    if (typeof body.body !== 'string' || body.body.length === 0)
      return fail(ctx.res, 422, 'Validation Failed', { errors: [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }] });
    const comment = { id: this.state.nextId(), by: ctx.login, body: body.body, at: iso(Date.now()), reactions: [] };
    found.pull.comments.push(comment);
    const json = this.webhooks.commentJson(found.repository, found.pull.number, comment);
    ctx.res.setHeader('location', String(json.url));
    send(ctx.res, 201, json);
    if (this.state.webhook) await this.webhooks.issueCommentCreated(found.repository, found.pull.number, comment).catch(() => undefined);
  }

  /** POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions: 201 for a new reaction, 200 for one the caller already gave. */
  private react({ login, body: rawBody, res }: RouteContext, match: RegExpMatchArray): void {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    const body = jsonBody(rawBody, res);
    if (!body) return;
    if (typeof body.content !== 'string' || !REACTIONS.includes(body.content))
      return fail(res, 422, 'Validation Failed', { errors: [{ resource: 'Reaction', field: 'content', code: 'invalid' }] });
    const comment = this.pulls.comment(`${repo.owner}/${repo.name}`, Number(match[3]));
    if (!comment) return fail(res, 404, 'Not Found');
    const given = comment.reactions.find((r) => r.by === login && r.content === body.content);
    const reaction = given ?? { id: this.state.nextId(), content: body.content, by: login, at: iso(Date.now()) };
    if (!given) comment.reactions.push(reaction);
    send(res, given ? 200 : 201, {
      id: reaction.id,
      node_id: Buffer.from(`Reaction:${reaction.id}`).toString('base64'),
      user: this.json.user(login),
      content: reaction.content,
      created_at: reaction.at,
    });
  }

  /** POST /repos/{owner}/{repo}/issues/{issue_number}/labels (`{labels: [...]}`): triage access needed; a `labeled` webhook for each new one. */
  private async addLabels(ctx: RouteContext, match: RegExpMatchArray): Promise<void> {
    const found = this.target(ctx, match);
    if (!found) return;
    if (!this.canTriage(found.repo, ctx.login)) return fail(ctx.res, 403, 'Must have triage access to add labels.');
    const body = jsonBody(ctx.body, ctx.res);
    if (!body) return;
    const labels = Array.isArray(body.labels) ? body.labels : [];
    if (labels.length === 0 || labels.some((l) => typeof l !== 'string' || l.length === 0 || l.length > 50))
      return fail(ctx.res, 422, 'Validation Failed', { errors: [{ resource: 'Label', field: 'labels', code: 'invalid' }] });
    const added = (labels as string[]).filter((l) => !found.pull.labels.includes(l));
    found.pull.labels.push(...added);
    send(
      ctx.res,
      200,
      found.pull.labels.map((l) => this.json.label(found.repository, l)),
    );
    for (const label of added) await this.webhooks.pullRequestLabel(found.repository, 'labeled', found.pull.number, label, ctx.login).catch(() => undefined);
  }

  /** DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}: 404 for a label the PR does not have; an `unlabeled` webhook. */
  private async removeLabel(ctx: RouteContext, match: RegExpMatchArray): Promise<void> {
    const found = this.target(ctx, match);
    if (!found) return;
    if (!this.canTriage(found.repo, ctx.login)) return fail(ctx.res, 403, 'Must have triage access to remove labels.');
    const name = decodeURIComponent(match[4]);
    if (!found.pull.labels.includes(name)) return fail(ctx.res, 404, 'Label does not exist');
    found.pull.labels = found.pull.labels.filter((l) => l !== name);
    send(
      ctx.res,
      200,
      found.pull.labels.map((l) => this.json.label(found.repository, l)),
    );
    await this.webhooks.pullRequestLabel(found.repository, 'unlabeled', found.pull.number, name, ctx.login).catch(() => undefined);
  }

  /** GET /repos/{owner}/{repo}/collaborators/{username}/permission: the person's role and legacy permission; 404 for a user GitHub does not know. */
  private permission({ login, res }: RouteContext, match: RegExpMatchArray): void {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    const username = decodeURIComponent(match[3]);
    if (!this.state.users.has(username)) return fail(res, 404, 'Not Found');
    const role = this.state.roleOf(repo, username);
    send(res, 200, { permission: LEGACY_PERMISSION[role], role_name: role, user: this.json.collaborator(repo, username) });
  }

  private canTriage(repo: Parameters<EmulatorState['roleOf']>[0], login: string): boolean {
    return ['triage', 'write', 'maintain', 'admin'].includes(this.state.roleOf(repo, login));
  }
}
