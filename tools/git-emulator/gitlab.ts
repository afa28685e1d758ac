/**
 * GitLab's v4 API (under /api/v4): the version, the token's user, a project and its members,
 * with GitLab's `x-total`/`x-page` pagination headers.
 */
import type http from 'node:http';
import { lastCommitDate } from './bare-git';
import { paginate, perPage, send } from './http';
import type { EmulatedUser, EmulatorState } from './state';

export class Gitlab {
  constructor(private readonly state: EmulatorState) {}

  /** One request; `path` is the part after /api/v4. */
  handle(req: http.IncomingMessage, url: URL, path: string, res: http.ServerResponse): void {
    if (path === '/version') return send(res, 200, { version: '17.5.0', revision: 'emulator' });
    const token = req.headers['private-token'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    const login = typeof token === 'string' ? this.state.tokens.get(token) : undefined;
    if (!login) return send(res, 401, { message: '401 Unauthorized' });
    const user = this.state.users.get(login) as EmulatedUser;
    if (path === '/user') return send(res, 200, { id: user.id, username: user.login, name: user.login, state: 'active' });
    const project = path.match(/^\/projects\/([^/]+)(\/members\/all)?$/);
    if (project) {
      const key = decodeURIComponent(project[1]).toLowerCase();
      const repo = [...this.state.repos.values()].find((r) => `${r.owner}/${r.name}`.toLowerCase() === key || String(r.id) === key);
      if (!this.state.canSee(repo, login)) return send(res, 404, { message: '404 Project Not Found' });
      if (project[2]) {
        const page = paginate(repo.collaborators, url, res);
        res.setHeader('x-total', String(repo.collaborators.length));
        res.setHeader('x-total-pages', String(Math.max(1, Math.ceil(repo.collaborators.length / perPage(url)))));
        res.setHeader('x-page', url.searchParams.get('page') ?? '1');
        res.setHeader('x-per-page', String(perPage(url)));
        return send(
          res,
          200,
          page.map((c) => ({ id: this.state.users.get(c)?.id ?? 0, username: c, access_level: 30 })),
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
        web_url: `${this.state.url}/${repo.owner}/${repo.name}`,
      });
    }
    return send(res, 404, { message: '404 Not Found' });
  }
}
