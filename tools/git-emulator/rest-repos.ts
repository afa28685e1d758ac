/**
 * GitHub's REST API for repositories and their git data: GET /repos/{o}/{r} and its collaborators,
 * POST statuses, the git database (refs, commits), compare and merges, served from the bare
 * repository with the git CLI.
 */
import type http from 'node:http';
import { BareRepository, SHA_PATTERN, type ChangedFile, type CommitInfo } from './bare-git';
import { GithubJson } from './github-json';
import { fail, gitFailure, iso, jsonBody, paginate, type Route, type RouteContext, send } from './http';
import type { EmulatedRepository, EmulatorState } from './state';
import type { Webhooks } from './webhooks';

/** GitHub's compare lists at most this many files. */
const COMPARE_FILES_CAP = 300;

const UNSIGNED = { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null };

export class RestRepos {
  readonly routes: Route[] = [
    { method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/statuses\/([0-9a-f]{40})$/, auth: 'user', handle: (ctx, m) => this.postStatus(ctx, m) },
    {
      path: /^\/repos\/([^/]+)\/([^/]+)\/(git\/ref|git\/refs|git\/commits|compare|merges)(?:\/(.+))?$/,
      auth: 'user',
      handle: (ctx, m) => this.gitData(ctx, m),
    },
    { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)(\/collaborators)?$/, auth: 'user', handle: (ctx, m) => this.repository(ctx, m) },
  ];

  private readonly json: GithubJson;

  constructor(
    private readonly state: EmulatorState,
    private readonly webhooks: Webhooks,
  ) {
    this.json = new GithubJson(state);
  }

  /** GET /repos/{owner}/{repo} and GET /repos/{owner}/{repo}/collaborators. */
  private repository({ login, url, res }: RouteContext, match: RegExpMatchArray): void {
    const repo = this.state.repository(match[1], match[2]);
    // Private repositories the user cannot see are a 404, as on GitHub.
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    if (match[3]) {
      if (!repo.collaborators.includes(login)) return fail(res, 403, 'Must have push access to view repository collaborators.');
      return send(
        res,
        200,
        paginate(repo.collaborators, url, res).map((c) => this.json.collaborator(repo, c)),
      );
    }
    return send(res, 200, this.json.repository(repo));
  }

  /** POST /repos/{owner}/{repo}/statuses/{sha}. */
  private postStatus({ login, body: rawBody, res }: RouteContext, match: RegExpMatchArray): void {
    if (this.state.knobs.statusFailures > 0) {
      this.state.knobs.statusFailures--;
      return fail(res, 502, 'Server Error');
    }
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    if (!repo.collaborators.includes(login)) return fail(res, 403, 'Resource not accessible by integration');
    const body = jsonBody(rawBody, res);
    if (!body) return;
    const state = body.state;
    if (state !== 'pending' && state !== 'success' && state !== 'failure' && state !== 'error') return fail(res, 422, 'Validation Failed');
    const context = typeof body.context === 'string' ? body.context : 'default';
    if (typeof body.description === 'string' && body.description.length > 140)
      return fail(res, 422, 'Validation Failed', {
        errors: [{ resource: 'Status', field: 'description', code: 'custom', message: 'description is too long (maximum is 140 characters)' }],
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
    this.state.statuses.push(status);
    const id = this.state.nextId();
    const now = iso(Date.now());
    return send(res, 201, {
      url: `${this.state.url}/repos/${repo.owner}/${repo.name}/statuses/${match[3]}`,
      avatar_url: null,
      id,
      node_id: Buffer.from(`StatusContext:${id}`).toString('base64'),
      state,
      description: status.description ?? null,
      target_url: status.targetUrl ?? null,
      context,
      created_at: now,
      updated_at: now,
      creator: this.json.user(login),
    });
  }

  /**
   * The git database, compare and merge endpoints, served from the bare repository with the git
   * CLI: GET /git/ref/{ref}, POST /git/refs, PATCH and DELETE /git/refs/{ref}, GET
   * /git/commits/{sha}, GET /compare/{base}...{head} and POST /merges. Reads need a repository the
   * user can see (else 404); writes need push access (a collaborator; else 403). Every ref update
   * is a compare-and-swap on the value just read (`git update-ref <ref> <new> <old>`), so a
   * fast-forward check and the update it allows are one atomic step.
   */
  private async gitData({ login, method, body: rawBody, res }: RouteContext, match: RegExpMatchArray): Promise<void> {
    if (gitFailure(this.state.knobs, res)) return;
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    if (method !== 'GET' && !repo.collaborators.includes(login)) return fail(res, 403, 'Resource not accessible by personal access token');
    const [kind, rest] = [match[3], match[4] === undefined ? undefined : decodeURIComponent(match[4])];
    let body: Record<string, unknown> = {};
    if (method === 'POST' || method === 'PATCH') {
      const parsed = jsonBody(rawBody, res);
      if (!parsed) return;
      body = parsed;
    }
    const git = new BareRepository(repo.path);
    const links = new GitLinks(this.state.url, repo);
    if (kind === 'git/ref' && method === 'GET' && rest) {
      const sha = await git.resolveRef(`refs/${rest}`);
      return sha ? send(res, 200, await links.ref(git, `refs/${rest}`, sha)) : fail(res, 404, 'Not Found');
    }
    if (kind === 'git/refs' && method === 'POST' && rest === undefined) {
      const { ref, sha } = body;
      if (typeof ref !== 'string' || !/^refs\/[^/]+\/.+/.test(ref) || !(await git.validRef(ref))) return fail(res, 422, 'Reference name is invalid');
      if (typeof sha !== 'string' || !(await git.hasObject(sha))) return fail(res, 422, 'Object does not exist');
      if (!(await git.updateRef(ref, sha, ''))) return fail(res, 422, 'Reference already exists');
      this.webhooks.refMoved(repo, ref, '0'.repeat(40), sha, login);
      res.setHeader('location', links.refUrl(ref));
      return send(res, 201, await links.ref(git, ref, sha));
    }
    if (kind === 'git/refs' && (method === 'PATCH' || method === 'DELETE') && rest) {
      const ref = `refs/${rest}`;
      if (!(await git.validRef(ref))) return fail(res, 422, 'Reference does not exist');
      if (ref.startsWith('refs/heads/') && this.state.isProtected(`${repo.owner}/${repo.name}`, ref.slice('refs/heads/'.length))) {
        return fail(res, 422, `Protected branch update failed for ${ref}.`, { documentation_url: 'https://docs.github.com/rest/git/refs#update-a-reference' });
      }
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await git.resolveRef(ref);
        if (!current) return fail(res, 422, 'Reference does not exist');
        if (method === 'DELETE') {
          if (await git.deleteRef(ref, current)) {
            this.webhooks.refMoved(repo, ref, current, '0'.repeat(40), login);
            return send(res, 204, undefined);
          }
          continue;
        }
        const { sha, force } = body;
        if (typeof sha !== 'string' || !(await git.hasObject(sha))) return fail(res, 422, 'Object does not exist');
        if (force !== true && !(await git.isAncestor(current, sha))) return fail(res, 422, 'Update is not a fast forward');
        if (await git.updateRef(ref, sha, current)) {
          this.webhooks.refMoved(repo, ref, current, sha, login);
          return send(res, 200, await links.ref(git, ref, sha));
        }
      }
      return fail(res, 409, 'Reference update failed');
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
        return fail(res, 422, 'Tree SHA does not exist');
      const list = Array.isArray(parents) ? parents : [];
      for (const p of list)
        if (typeof p !== 'string' || !SHA_PATTERN.test(p) || (await git.resolveCommitish(p)) === null)
          return fail(res, 422, 'Parent SHA does not exist or is not a commit object');
      // GitHub: the author defaults to the token's user, the committer to the author.
      const author = body.author === undefined ? this.identity(login) : gitPerson(body.author);
      const committer = body.committer === undefined ? author : gitPerson(body.committer);
      if (!author || !committer) return fail(res, 422, 'Invalid request.\n\nauthor and committer need a name and an email.');
      const sha = await git.commitTree(tree, list as string[], message, author, committer);
      res.setHeader('location', `${links.api}/git/commits/${sha}`);
      return send(res, 201, links.gitCommit((await git.commit(sha))!));
    }
    if (kind === 'git/commits' && method === 'GET' && rest) {
      const commit = SHA_PATTERN.test(rest) ? await git.commit(rest) : null;
      return commit ? send(res, 200, links.gitCommit(commit)) : fail(res, 404, 'Not Found');
    }
    if (kind === 'compare' && method === 'GET' && rest) return this.compare(git, links, rest, res);
    if (kind === 'merges' && method === 'POST' && rest === undefined) return this.merge(repo, git, links, login, body, res);
    return fail(res, 404, 'Not Found');
  }

  /** GET /compare/{base}...{head}: where head stands relative to base (ahead, behind, identical, diverged). */
  private async compare(git: BareRepository, links: GitLinks, basehead: string, res: http.ServerResponse): Promise<void> {
    const parts = basehead.split('...');
    if (parts.length !== 2) return fail(res, 404, 'Not Found');
    const [base, head] = await Promise.all(parts.map((p) => git.resolveCommitish(p)));
    if (!base || !head) return fail(res, 404, 'Not Found');
    const mergeBase = await git.mergeBase(base, head);
    if (!mergeBase) return fail(res, 404, `No common ancestor between ${parts[0]} and ${parts[1]}.`);
    const ahead = await git.revList(`${base}..${head}`);
    const behindBy = (await git.revList(`${head}..${base}`)).length;
    const status = ahead.length === 0 && behindBy === 0 ? 'identical' : behindBy === 0 ? 'ahead' : ahead.length === 0 ? 'behind' : 'diverged';
    const commits = await Promise.all(ahead.slice(-250).map(async (sha) => links.repoCommit((await git.commit(sha))!)));
    // The files head changes since the merge base, at most 300 (GitHub's own cap: a longer list is cut).
    const files = (await git.changedFiles(mergeBase, head)).slice(0, COMPARE_FILES_CAP).map((f) => links.diffEntry(f, head));
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
  private async merge(
    repo: EmulatedRepository,
    git: BareRepository,
    links: GitLinks,
    login: string,
    body: Record<string, unknown>,
    res: http.ServerResponse,
  ): Promise<void> {
    const { base, head, commit_message: message } = body;
    if (typeof base !== 'string' || typeof head !== 'string') return fail(res, 422, 'Invalid request.\n\n"base" and "head" are required.');
    const baseRef = `refs/heads/${base}`;
    if (!(await git.validRef(baseRef))) return fail(res, 404, 'Base does not exist');
    const headSha = await git.resolveCommitish(head);
    if (!headSha) return fail(res, 404, 'Head does not exist');
    for (let attempt = 0; attempt < 5; attempt++) {
      const baseSha = await git.resolveRef(baseRef);
      if (!baseSha) return fail(res, 404, 'Base does not exist');
      if (await git.isAncestor(headSha, baseSha)) return send(res, 204, undefined);
      const tree = await git.mergeTree(baseSha, headSha);
      if (!tree) return fail(res, 409, 'Merge conflict');
      const merged = await git.commitTree(
        tree,
        [baseSha, headSha],
        typeof message === 'string' && message ? message : `Merge ${head} into ${base}`,
        this.identity(login),
      );
      if (await git.updateRef(baseRef, merged, baseSha)) {
        this.webhooks.refMoved(repo, baseRef, baseSha, merged, login);
        return send(res, 201, { ...links.repoCommit((await git.commit(merged))!), author: this.json.user(login), committer: this.json.user(login) });
      }
    }
    return fail(res, 409, 'Reference update failed');
  }

  /** The git identity of commits the API writes for `login` (GitHub's noreply address). */
  private identity(login: string): { name: string; email: string } {
    return { name: login, email: `${this.state.users.get(login)?.id ?? 0}+${login}@users.noreply.emulator.test` };
  }
}

/** POST /git/commits' `author` or `committer`: a name and an email, and a date (ISO 8601) when given; null when malformed. */
function gitPerson(value: unknown): { name: string; email: string; date?: string } | null {
  const p = value as { name?: unknown; email?: unknown; date?: unknown } | null;
  if (!p || typeof p !== 'object' || typeof p.name !== 'string' || typeof p.email !== 'string') return null;
  if (p.date !== undefined && (typeof p.date !== 'string' || Number.isNaN(Date.parse(p.date)))) return null;
  return { name: p.name, email: p.email, ...(typeof p.date === 'string' && { date: p.date }) };
}

/** The URLs and JSON shapes GitHub gives refs and commits of one repository. */
export class GitLinks {
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

  /** A compare's file (`diff-entry`), with its blob at `head` and its line counts. */
  diffEntry(f: ChangedFile, head: string): object {
    const path = f.filename.split('/').map(encodeURIComponent).join('/');
    return {
      sha: f.sha,
      filename: f.filename,
      status: f.status,
      additions: f.additions,
      deletions: f.deletions,
      changes: f.additions + f.deletions,
      blob_url: `${this.html}/blob/${head}/${path}`,
      raw_url: `${this.html}/raw/${head}/${path}`,
      contents_url: `${this.api}/contents/${path}?ref=${head}`,
      ...(f.previous_filename !== undefined && { previous_filename: f.previous_filename }),
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
