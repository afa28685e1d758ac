/**
 * GitHub Apps and OAuth: who a token is (GET /user), app installations (GET /user/installations,
 * the user's organization memberships GET /user/memberships/orgs/{org}, the repositories an
 * installation covers: GET /installation/repositories with its token and
 * GET /user/installations/{id}/repositories with a user's,
 * the app-JWT endpoints GET /app/installations/{id} and POST .../access_tokens), installation
 * tokens, and the web flow on the web host (the authorize and install pages, the token endpoint).
 */
import { randomBytes, verify as verifySignature, type KeyObject } from 'node:crypto';
import type http from 'node:http';
import { fail, paginate, parseForm, redirect, type Route, type RouteContext, send } from './http';
import { GithubJson, organizationId } from './github-json';
import type { EmulatedInstallation, EmulatedMembership, EmulatedRepository, EmulatorState } from './state';

export class AppsOAuth {
  readonly routes: Route[] = [
    // App endpoints authenticate with the app's JWT (verified when an app is configured).
    { path: /^\/app\/installations\/(\d+)(\/access_tokens)?$/, auth: 'app', handle: (ctx, m) => this.appInstallation(ctx, m) },
    { method: 'GET', path: /^\/user$/, auth: 'user', handle: (ctx) => this.user(ctx) },
    { method: 'GET', path: /^\/user\/installations$/, auth: 'user', handle: (ctx) => this.userInstallations(ctx) },
    { method: 'GET', path: /^\/user\/installations\/(\d+)\/repositories$/, auth: 'user', handle: (ctx, m) => this.userInstallationRepositories(ctx, m) },
    { method: 'GET', path: /^\/user\/memberships\/orgs\/([^/]+)$/, auth: 'user', handle: (ctx, m) => this.membership(ctx, m) },
    { method: 'GET', path: /^\/installation\/repositories$/, auth: 'user', handle: (ctx) => this.installationRepositories(ctx) },
  ];

  private readonly json: GithubJson;

  constructor(private readonly state: EmulatorState) {
    this.json = new GithubJson(state);
  }

  /** The user a request's `Authorization: token|bearer <token>` acts as, if the token is known. */
  authenticate(req: http.IncomingMessage): string | undefined {
    const match = (req.headers.authorization ?? '').match(/^(?:token|bearer) (\S+)$/i);
    return match ? this.state.tokens.get(match[1]) : undefined;
  }

  addInstallation(account: string, users: string[], options: { type?: 'User' | 'Organization'; repositories?: string[] } = {}): EmulatedInstallation {
    const accountType = options.type ?? (this.state.users.has(account) ? 'User' : 'Organization');
    const installation: EmulatedInstallation = { id: this.state.nextId(), account, accountType, users, repositories: options.repositories };
    this.state.installations.set(installation.id, installation);
    return installation;
  }

  addOrgMember(org: string, login: string, membership: Partial<EmulatedMembership> = {}): void {
    const members = this.state.memberships.get(org.toLowerCase()) ?? new Map<string, EmulatedMembership>();
    members.set(login, { role: membership.role ?? 'member', state: membership.state ?? 'active' });
    this.state.memberships.set(org.toLowerCase(), members);
  }

  /** The repositories an installation covers: the selected ones, or every repository of its account. */
  private covered(installation: EmulatedInstallation): EmulatedRepository[] {
    const selected = installation.repositories?.map((name) => name.toLowerCase());
    return [...this.state.repos.values()].filter((repo) =>
      selected ? selected.includes(`${repo.owner}/${repo.name}`.toLowerCase()) : repo.owner.toLowerCase() === installation.account.toLowerCase(),
    );
  }

  /** The bot login an installation token acts as: `<app slug>[bot]`, with write access to the installation account's repositories. */
  get botLogin(): string {
    return `${this.state.appSlug}[bot]`;
  }

  /** What the provider's authorize page would hand back to the callback for `login`. */
  issueCode(login: string): string {
    const code = randomBytes(10).toString('hex');
    this.state.codes.set(code, { login, used: false });
    return code;
  }

  /** Whether a path is a page or endpoint of the web host (answered before the API's knobs apply). */
  isWebPath(pathname: string): boolean {
    return pathname.startsWith('/login/') || pathname.startsWith('/apps/');
  }

  /** The browser pages and the token endpoint on the web host. */
  web(method: string, url: URL, body: string, res: http.ServerResponse): void {
    if (method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const params = parseForm(body);
      if (params.client_id !== this.state.clientId || params.client_secret !== this.state.clientSecret)
        return send(res, 200, { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
      if (params.grant_type === 'refresh_token') {
        const login = this.state.tokens.get(params.refresh_token ?? '');
        if (!login) return send(res, 200, { error: 'bad_refresh_token', error_description: 'The refresh token passed is incorrect or expired.' });
        this.state.tokens.delete(params.refresh_token ?? '');
        return send(res, 200, this.tokenAnswer(login));
      }
      const code = this.state.codes.get(params.code ?? '');
      if (!code || code.used) return send(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      code.used = true;
      return send(res, 200, this.tokenAnswer(code.login));
    }
    // The authorize and install pages: the emulated user always agrees (tests call the callback themselves).
    const state = url.searchParams.get('state') ?? '';
    const browserUser = this.state.browserUser;
    if (method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const target = new URL(url.searchParams.get('redirect_uri') || this.state.callbackUrl);
      target.search = new URLSearchParams({ code: this.issueCode(browserUser), state }).toString();
      return redirect(res, target.toString());
    }
    if (method === 'GET' && /^\/apps\/[^/]+\/installations\/new$/.test(url.pathname)) {
      const installation =
        [...this.state.installations.values()].find((i) => i.users.includes(browserUser)) ?? this.addInstallation(browserUser, [browserUser]);
      const target = new URL(this.state.callbackUrl);
      target.search = new URLSearchParams({
        code: this.issueCode(browserUser),
        installation_id: String(installation.id),
        setup_action: 'install',
        state,
      }).toString();
      return redirect(res, target.toString());
    }
    return fail(res, 404, 'Not Found');
  }

  /** GET /app/installations/{id} and POST /app/installations/{id}/access_tokens, with the app's JWT. */
  private appInstallation({ req, method, res }: RouteContext, match: RegExpMatchArray): void {
    const jwt = (req.headers.authorization ?? '').match(/^bearer (\S+)$/i)?.[1];
    if (!jwt) return fail(res, 401, 'A JSON web token could not be decoded');
    if (this.state.app && !verifyAppJwt(jwt, this.state.app)) return fail(res, 401, "'Expiration time' claim ('exp') or signature is invalid");
    const installation = this.state.installations.get(Number(match[1]));
    if (!installation) return fail(res, 404, 'Not Found');
    if (match[2] && method === 'POST') return send(res, 201, this.issueInstallationToken(installation));
    if (!match[2] && method === 'GET') return send(res, 200, this.json.installation(installation));
    return fail(res, 404, 'Not Found');
  }

  private user({ login, res }: RouteContext): void {
    return send(res, 200, this.json.publicUser(login));
  }

  private userInstallations({ login, url, res }: RouteContext): void {
    const mine = [...this.state.installations.values()].filter((i) => i.users.includes(login));
    const page = paginate(mine, url, res);
    return send(res, 200, { total_count: mine.length, installations: page.map((i) => this.json.installation(i)) });
  }

  /** GET /user/memberships/orgs/{org}: the user's membership, a 404 when they have none (GitHub's `org-membership`). */
  private membership({ login, res }: RouteContext, match: RegExpMatchArray): void {
    const org = decodeURIComponent(match[1]);
    const membership = this.state.memberships.get(org.toLowerCase())?.get(login);
    if (!membership)
      return send(res, 404, {
        message: 'Not Found',
        documentation_url: 'https://docs.github.com/rest/orgs/members#get-an-organization-membership-for-the-authenticated-user',
      });
    const base = this.state.url;
    return send(res, 200, {
      url: `${base}/orgs/${org}/memberships/${login}`,
      state: membership.state,
      role: membership.role,
      organization_url: `${base}/orgs/${org}`,
      organization: organizationJson(org, base),
      user: this.json.user(login),
      permissions: { can_create_repository: membership.role === 'admin' },
    });
  }

  /** GET /installation/repositories: with an installation token, the repositories it covers. */
  private installationRepositories({ req, url, res }: RouteContext): void {
    const token = (req.headers.authorization ?? '').match(/^(?:token|bearer) (\S+)$/i)?.[1];
    const issued = this.state.installationTokens.find((t) => t.token === token);
    const installation = issued ? this.state.installations.get(issued.installationId) : undefined;
    if (!installation)
      return send(res, 403, { message: 'You must authenticate with an installation access token in order to list repositories for an installation.' });
    const repositories = this.covered(installation);
    const page = paginate(repositories, url, res);
    return send(res, 200, {
      total_count: repositories.length,
      repository_selection: installation.repositories ? 'selected' : 'all',
      repositories: page.map((repo) => this.json.repository(repo)),
    });
  }

  /** GET /user/installations/{id}/repositories: the covered repositories the user can access; a 404 for an installation they cannot. */
  private userInstallationRepositories({ login, url, res }: RouteContext, match: RegExpMatchArray): void {
    const installation = this.state.installations.get(Number(match[1]));
    if (!installation || !installation.users.includes(login)) return send(res, 404, { message: 'Not Found' });
    const repositories = this.covered(installation).filter((repo) => this.state.canSee(repo, login));
    const page = paginate(repositories, url, res);
    return send(res, 200, {
      total_count: repositories.length,
      repository_selection: installation.repositories ? 'selected' : 'all',
      repositories: page.map((repo) => this.json.repository(repo)),
    });
  }

  private issueInstallationToken(installation: EmulatedInstallation): { token: string; expires_at: string } {
    const token = `ghs_${randomBytes(18).toString('base64url')}`;
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const bot = this.botLogin;
    if (!this.state.users.has(bot)) this.state.users.set(bot, { id: this.state.nextId(), login: bot });
    // The app's bot writes to the repositories the installation covers, and to no other.
    for (const repo of this.covered(installation)) if (!repo.collaborators.includes(bot)) repo.collaborators.push(bot);
    this.state.tokens.set(token, bot);
    this.state.installationTokens.push({ token, installationId: installation.id, expiresAt });
    return { token, expires_at: expiresAt };
  }

  private tokenAnswer(login: string): object {
    const refresh = this.state.issueToken(login);
    return {
      access_token: this.state.issueToken(login),
      token_type: 'bearer',
      scope: '',
      expires_in: 28_800,
      refresh_token: refresh,
      refresh_token_expires_in: 15_897_600,
    };
  }
}

/** GitHub's `organization-simple` for an organization login. */
function organizationJson(org: string, base: string): object {
  const id = organizationId(org);
  return {
    login: org,
    id,
    node_id: Buffer.from(`Organization:${id}`).toString('base64'),
    url: `${base}/orgs/${org}`,
    repos_url: `${base}/orgs/${org}/repos`,
    events_url: `${base}/orgs/${org}/events`,
    hooks_url: `${base}/orgs/${org}/hooks`,
    issues_url: `${base}/orgs/${org}/issues`,
    members_url: `${base}/orgs/${org}/members{/member}`,
    public_members_url: `${base}/orgs/${org}/public_members{/member}`,
    avatar_url: `${base}/avatars/${org}`,
    description: null,
  };
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
