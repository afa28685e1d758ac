/**
 * GitHub's GraphQL API (POST /graphql on GitHub.com, /api/graphql on Enterprise Server): the
 * mutation the engine lands with, `updateRefs`, and the review decision query
 * (`repository { pullRequest { reviewDecision headRefOid } }`).
 */
import { getLocation, Kind, parse, visit, type FieldNode } from 'graphql';
import { BareRepository, SHA_PATTERN } from './bare-git';
import { fail, gitFailure, type Route, type RouteContext, send } from './http';
import type { Pulls } from './pulls';
import type { EmulatorState } from './state';
import type { Webhooks } from './webhooks';

export class Graphql {
  readonly routes: Route[] = [
    {
      method: 'POST',
      path: /^\/(?:api\/)?graphql$/,
      auth: 'user',
      handle: (ctx) => this.handle(ctx),
    },
  ];

  constructor(
    private readonly state: EmulatorState,
    private readonly webhooks: Webhooks,
    private readonly pulls?: Pulls,
  ) {}

  /**
   * `updateRefs(input: {repositoryId, refUpdates})`. As GitHub documents it: all updates are
   * performed atomically (here one `git update-ref --stdin` transaction), each `beforeOid` must be
   * where its ref points (zeros: must not exist), an `afterOid` of zeros deletes, and without
   * `force` an update must be a fast-forward. A refusal is HTTP 200 with a generic entry in
   * `errors` and `updateRefs: null`, as GitHub answers it.
   */
  private async handle({ login, body: rawBody, res }: RouteContext): Promise<void> {
    let request: { query?: unknown; variables?: Record<string, unknown> };
    try {
      request = JSON.parse(rawBody || '{}') as typeof request;
    } catch {
      return fail(res, 400, 'Problems parsing JSON');
    }
    // The same failure knob as the REST git endpoints: an HTTP error (with Retry-After) before anything is looked at.
    if (gitFailure(this.state.knobs, res)) return;
    if (typeof request.query === 'string' && this.pulls && fieldNamed(request.query, 'pullRequest'))
      return this.pullRequest(login, request.query, request.variables ?? {}, res);
    const field = typeof request.query === 'string' ? fieldNamed(request.query, 'updateRefs') : undefined;
    if (!field) return send(res, 200, { errors: [{ message: 'The emulator serves only the updateRefs mutation and the pullRequest query.' }] });
    // GitHub's errors point at the field that failed: its path (alias or name) and where it stands in the document.
    const path = [field.alias?.value ?? field.name.value];
    const locations = field.loc ? [getLocation(field.loc.source, field.loc.start)] : [];
    const refuse = (message: string, type?: string) =>
      send(res, 200, { data: { [path[0]]: null }, errors: [{ ...(type && { type }), path, locations, message }] });
    const { repositoryId, refUpdates } = request.variables ?? {};
    const repo = [...this.state.repos.values()].find((r) => Buffer.from(`Repository:${r.id}`).toString('base64') === repositoryId);
    if (!this.state.canSee(repo, login)) return refuse(`Could not resolve to a node with the global id of '${String(repositoryId)}'`, 'NOT_FOUND');
    if (!repo.collaborators.includes(login)) return refuse(`${login} does not have permission to update refs on ${repo.owner}/${repo.name}.`, 'FORBIDDEN');
    if (!Array.isArray(refUpdates) || refUpdates.length === 0) return refuse('refUpdates must list at least one update');
    if (this.state.knobs.holdUpdateRefs) {
      this.state.knobs.heldUpdateRefs++;
      await this.state.knobs.holdUpdateRefs;
    }
    const git = new BareRepository(repo.path);
    const ZERO = '0'.repeat(40);
    const lines: string[] = [];
    const moved: { ref: string; before: string; after: string }[] = [];
    for (const u of refUpdates as { name?: unknown; afterOid?: unknown; beforeOid?: unknown; force?: unknown }[]) {
      if (typeof u.name !== 'string' || !(await git.validRef(u.name)) || typeof u.afterOid !== 'string' || !SHA_PATTERN.test(u.afterOid))
        return refuse('Invalid ref update');
      const before = typeof u.beforeOid === 'string' && SHA_PATTERN.test(u.beforeOid) ? u.beforeOid : undefined;
      if (u.afterOid === ZERO) {
        lines.push(`delete ${u.name}${before ? ` ${before}` : ''}`);
        moved.push({ ref: u.name, before: before ?? (await git.resolveRef(u.name)) ?? ZERO, after: ZERO });
        continue;
      }
      if (u.name.startsWith('refs/heads/') && this.state.isProtected(`${repo.owner}/${repo.name}`, u.name.slice('refs/heads/'.length)))
        return refuse(`Protected branch update failed for ${u.name}.`, 'UNPROCESSABLE');
      if (!(await git.hasObject(u.afterOid))) return refuse(`Could not resolve to an object with the oid ${u.afterOid}`);
      const from = before ?? (await git.resolveRef(u.name)) ?? ZERO;
      if (u.force !== true && from !== ZERO && from !== u.afterOid && !(await git.isAncestor(from, u.afterOid)))
        return refuse(`Update of ${u.name} is not a fast forward`);
      lines.push(`update ${u.name} ${u.afterOid}${before ? ` ${before}` : ''}`);
      moved.push({ ref: u.name, before: from, after: u.afterOid });
    }
    if (!(await git.updateRefs(`${lines.join('\n')}\n`))) return refuse('A ref was not where the update expected it; no ref was updated.');
    for (const move of moved) this.webhooks.refMoved(repo, move.ref, move.before, move.after, login);
    return send(res, 200, { data: { [path[0]]: { clientMutationId: null } } });
  }

  /**
   * `repository(owner, name) { pullRequest(number) { reviewDecision headRefOid } }`, with the
   * variables `owner`, `name` and `number`. An unknown (or unseen) repository or PR is GitHub's
   * NOT_FOUND error entry with the data null.
   */
  private pullRequest(login: string, query: string, variables: Record<string, unknown>, res: RouteContext['res']): void {
    const { owner, name, number } = variables;
    const repo = typeof owner === 'string' && typeof name === 'string' ? this.state.repository(owner, name) : undefined;
    // Each error is located on the field that failed (`repository`, or its `pullRequest`).
    const locate = (field: string) => {
      const node = fieldNamed(query, field);
      return node?.loc ? [getLocation(node.loc.source, node.loc.start)] : [];
    };
    const notFound = (message: string, path: string[]) =>
      send(res, 200, {
        data: { repository: path.length === 1 ? null : { pullRequest: null } },
        errors: [{ type: 'NOT_FOUND', path, locations: locate(path[path.length - 1]), message }],
      });
    if (!this.state.canSee(repo, login)) return notFound(`Could not resolve to a Repository with the name '${String(owner)}/${String(name)}'.`, ['repository']);
    const pull = typeof number === 'number' ? this.pulls?.find(repo, login, number) : undefined;
    if (!pull) return notFound(`Could not resolve to a PullRequest with the number of ${String(number)}.`, ['repository', 'pullRequest']);
    send(res, 200, { data: { repository: { pullRequest: { reviewDecision: this.pulls?.reviewDecision(repo, pull) ?? null, headRefOid: pull.headSha } } } });
  }
}

/** The first field `name` of a GraphQL document, or undefined (also when the document does not parse). */
function fieldNamed(query: string, name: string): FieldNode | undefined {
  let found: FieldNode | undefined;
  try {
    visit(parse(query), {
      [Kind.FIELD]: (node: FieldNode) => {
        if (!found && node.name.value === name) found = node;
      },
    });
  } catch {
    return undefined;
  }
  return found;
}
