import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { meteredFetch } from '@/common/metrics/metered-fetch';
import { MetricsService } from '@/common/metrics/metrics.service';
import { makeResolve, providerFetch, resolveAllowed, sameOriginFetch, type Resolve } from '@/common/net/host-guard';
import { checkHostUrl, type HostPolicy } from '@/common/net/host-policy';
import { ProviderFailure, type GitProviderAuthorization, type GitProviderClient, type ProviderKind } from './git-provider.port';
import { GitProviderErrors, providerError } from './git-providers.errors';
import { GitHubAppInstallations } from './github-app';
import { GitHubAuthorization, GitHubClient, type GitHubEndpoints } from './github.provider';
import { GitLabClient } from './gitlab.provider';
import { LocalGitClient } from './local-git.provider';
import { LocalGitRunner } from './local-git.runner';
import { classifyTransportFailure } from './provider-failures';

/** Stricter limits for one client's calls (a usage import's pages). */
export interface ClientLimits {
  /** The largest response body; also the largest page of CI usage, refused past it. */
  maxResponseBytes: number;
  /** The most JSON values one page of CI usage may hold. */
  maxJsonValues: number;
}

/** Where a provider account lives: the cloud provider, or a self-hosted server's URL. */
export interface ProviderTarget {
  provider: ProviderKind;
  /** Self-hosted server URL (GITHUB_ENTERPRISE, GITLAB), already checked when the server was added. */
  hostUrl?: string;
}

/**
 * The one place that builds provider clients. Calls to the configured cloud provider URLs go out
 * as they are (the operator chose them); calls to a self-hosted server a caller registered go
 * through the connection guard (host-guard.ts) with the SSRF policy from config, on every request.
 */
@Injectable()
export class GitProviders {
  private readonly policy: HostPolicy;
  private readonly resolve: Resolve;
  private readonly cloudFetch: typeof fetch;
  private readonly serverFetch: typeof fetch;
  private readonly localGit: LocalGitClient;
  private app?: GitHubAppInstallations;
  /** The fetches of clients with stricter limits, by the largest body they accept. */
  private readonly limitedFetches = new Map<number, { cloud: typeof fetch; server: typeof fetch }>();
  private readonly metrics?: MetricsService;
  /** The one runner of the `git` CLI on LOCAL_GIT repositories (code sources and merge queues). */
  readonly localGitRunner: LocalGitRunner;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() metrics?: MetricsService,
  ) {
    this.metrics = metrics;
    this.policy = { allowHttp: config.git.allowHttp, allowPrivateHosts: config.git.allowPrivateHosts };
    this.resolve = makeResolve(config.git.dnsServers, config.git.timeoutMs);
    ({ cloud: this.cloudFetch, server: this.serverFetch } = this.fetches(config.git.maxResponseBytes));
    this.localGitRunner = new LocalGitRunner({ timeoutMs: config.git.localTimeoutMs });
    this.localGit = new LocalGitClient({ root: config.git.localRoot, runner: this.localGitRunner });
  }

  /**
   * The cloud and self-hosted fetches with a body cap of `maxResponseBytes`. dpa_provider_calls_total
   * and dpa_provider_rate_limit_remaining: the cloud fetch only talks to GitHub; a self-hosted server
   * is GitLab when the path is GitLab's API, else GitHub Enterprise.
   */
  private fetches(maxResponseBytes: number): { cloud: typeof fetch; server: typeof fetch } {
    const timeoutMs = this.config.git.timeoutMs;
    let cloud = providerFetch({ timeoutMs, maxResponseBytes });
    let server = providerFetch({ timeoutMs, maxResponseBytes, guard: { policy: this.policy, resolve: this.resolve } });
    if (this.metrics) {
      cloud = meteredFetch(cloud, () => 'GITHUB', this.metrics);
      server = meteredFetch(server, (url) => (/\/api\/v4(\/|$)/.test(new URL(url).pathname) ? 'GITLAB' : 'GITHUB_ENTERPRISE'), this.metrics);
    }
    return { cloud, server };
  }

  /** The configured GitHub App (GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY) on github.com, or undefined. */
  githubApp(): GitHubAppInstallations | undefined {
    const app = this.config.git.github.app;
    if (!app) return undefined;
    this.app ??= new GitHubAppInstallations(this.githubCloud(), app);
    return this.app;
  }

  /**
   * A client for an account at `target` with `token` (LOCAL_GIT needs none); with `limits`, its
   * calls accept smaller answers (a usage import's pages).
   */
  client(target: ProviderTarget, token?: string, limits?: ClientLimits): GitProviderClient {
    switch (target.provider) {
      case 'LOCAL_GIT':
        return this.local();
      case 'GITHUB':
        return new GitHubClient(this.githubCloud(limits), token ?? '');
      case 'GITHUB_ENTERPRISE':
        return new GitHubClient(this.githubServer(target.hostUrl, limits), token ?? '');
      case 'GITLAB': {
        const hostUrl = this.serverUrl(target.hostUrl);
        return new GitLabClient({ hostUrl, token: token ?? '', fetch: sameOriginFetch(this.serverFetch, [hostUrl]) });
      }
    }
  }

  /** The web flow of a provider: only GitHub cloud, and only when an app is configured. */
  authorization(provider: ProviderKind): GitProviderAuthorization {
    const { clientId, clientSecret, appSlug } = this.config.git.github;
    if (provider !== 'GITHUB' || !clientId || !clientSecret) {
      throw new AppError(GitProviderErrors.NOT_CONFIGURED, {
        message:
          provider === 'GITHUB'
            ? 'No GitHub app is configured on this server (GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET); use authMethod API_TOKEN.'
            : `${provider} integrations connect with authMethod API_TOKEN.`,
        metadata: { provider },
      });
    }
    return new GitHubAuthorization(this.githubCloud(), { clientId, clientSecret, appSlug });
  }

  local(): LocalGitClient {
    if (!this.config.git.localEnabled)
      throw new AppError(GitProviderErrors.LOCAL_GIT_DISABLED, { message: 'LOCAL_GIT repositories are disabled on this server (GIT_LOCAL_ENABLED).' });
    return this.localGit;
  }

  /** The OAuth callback URL providers redirect the browser to. */
  callbackUrl(): string {
    return `${this.config.git.publicUrl}/scm/callback`;
  }

  /**
   * Checks a self-hosted server URL a caller gives (scheme, userinfo, query, fragment, and every
   * address its name resolves to) and returns it normalized; a refusal is a 422 saying why.
   */
  async checkServerUrl(hostUrl: string): Promise<string> {
    const checked = checkHostUrl(hostUrl, this.policy);
    if (!checked.ok) throw new AppError(GitProviderErrors.HOST_REFUSED, { message: `data.hostUrl ${checked.reason}.`, metadata: { reason: checked.reason } });
    try {
      await resolveAllowed(checked.url.hostname, this.policy, this.resolve);
    } catch (error) {
      throw providerError(classifyTransportFailure(error), 'checking');
    }
    return checked.normalized;
  }

  /** Asks the server something every instance of the product answers (through the guard). */
  async probeServer(provider: 'GITHUB_ENTERPRISE' | 'GITLAB', hostUrl: string): Promise<void> {
    const url = provider === 'GITLAB' ? `${hostUrl}/api/v4/version` : `${hostUrl}/api/v3/meta`;
    try {
      const response = await this.serverFetch(url, { method: 'GET', headers: { accept: 'application/json' } });
      await response.arrayBuffer();
      if (response.status >= 500) throw new ProviderFailure('unavailable', `the server answered ${response.status}`);
    } catch (error) {
      throw providerError(classifyTransportFailure(error), 'checking');
    }
  }

  /** Calls go to the configured API and web origins only (a `Link` elsewhere is refused). */
  private githubCloud(limits?: ClientLimits): GitHubEndpoints {
    const { apiUrl, webUrl } = this.config.git.github;
    const inner = limits ? this.limited(limits).cloud : this.cloudFetch;
    return { apiUrl, webUrl, fetch: sameOriginFetch(inner, [apiUrl, webUrl]), maxPages: this.config.git.maxPages, usagePages: usagePages(limits) };
  }

  /** Through the guard, and to the server's own origin only. */
  private githubServer(hostUrl: string | undefined, limits?: ClientLimits): GitHubEndpoints {
    const base = this.serverUrl(hostUrl);
    const inner = limits ? this.limited(limits).server : this.serverFetch;
    return {
      apiUrl: `${base}/api/v3`,
      webUrl: base,
      fetch: sameOriginFetch(inner, [base]),
      maxPages: this.config.git.maxPages,
      usagePages: usagePages(limits),
    };
  }

  private limited(limits: ClientLimits): { cloud: typeof fetch; server: typeof fetch } {
    const maxBytes = Math.min(limits.maxResponseBytes, this.config.git.maxResponseBytes);
    let fetches = this.limitedFetches.get(maxBytes);
    if (!fetches) this.limitedFetches.set(maxBytes, (fetches = this.fetches(maxBytes)));
    return fetches;
  }

  private serverUrl(hostUrl: string | undefined): string {
    if (!hostUrl) throw new AppError(GitProviderErrors.REQUEST_REJECTED, { message: 'This provider needs a self-hosted git server (gitServerId).' });
    return hostUrl;
  }
}

function usagePages(limits: ClientLimits | undefined): GitHubEndpoints['usagePages'] {
  return limits ? { maxBytes: limits.maxResponseBytes, maxValues: limits.maxJsonValues } : undefined;
}
