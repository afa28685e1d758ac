import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import type { GitHubEndpoints } from './github.provider';
import { call } from './github.provider';

const SILENT = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Acting as the GitHub App (@octokit/auth-app): a JWT signed with the app's private key (RS256,
 * `iss` the app id, about 10 minutes) is exchanged for an installation token. Tokens are cached by
 * auth-app in this process's memory only (an LRU, each kept until a minute before GitHub's one-hour
 * expiry, concurrent requests for one installation sharing one exchange); nothing is written to
 * Redis or the database, so a token is never stored, logged or returned. Each process exchanges
 * its own (GitHub allows many live installation tokens).
 */
export class GitHubAppInstallations {
  private readonly auth: ReturnType<typeof createAppAuth>;

  constructor(endpoints: GitHubEndpoints, app: { appId: string; privateKey: string }) {
    const request = new Octokit({ baseUrl: endpoints.apiUrl, userAgent: 'delivery-platform-api', log: SILENT, request: { fetch: endpoints.fetch } }).request;
    this.auth = createAppAuth({ appId: app.appId, privateKey: app.privateKey, request });
  }

  /** A token of the installation (cached until shortly before it expires); provider failures as ProviderFailure. */
  async installationToken(installationId: string): Promise<string> {
    const { token } = await call(() => this.auth({ type: 'installation', installationId: Number(installationId) }));
    return token;
  }

  /** The app's JWT (for the unit test and diagnostics; never logged). */
  async appJwt(): Promise<string> {
    const { token } = await this.auth({ type: 'app' });
    return token;
  }
}
