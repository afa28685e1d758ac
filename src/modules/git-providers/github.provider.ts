import { Octokit } from '@octokit/rest';
import {
  ProviderFailure,
  type CiUsageCall,
  type CiUsageReader,
  type GitProviderAuthorization,
  type GitProviderClient,
  type ProviderAccount,
  type ProviderTokens,
  type RepositoryInfo,
  type WorkflowJob,
  type WorkflowRun,
} from './git-provider.port';
import { classifyHttpFailure, classifyTransportFailure } from './provider-failures';
import { meteredPages } from './usage-pages';

export interface GitHubEndpoints {
  /** REST API root: https://api.github.com, or https://<host>/api/v3 for GitHub Enterprise Server. */
  apiUrl: string;
  /** Web root, for the OAuth pages: https://github.com or https://<host>. */
  webUrl: string;
  fetch: typeof fetch;
  /** The most pages a listing is followed through (GIT_PROVIDER_MAX_PAGES); more is a ProviderFailure. */
  maxPages?: number;
  /**
   * What a CI usage page may be (the fetch above already drops a body past `maxBytes`): larger,
   * or holding more JSON values than `maxValues`, it is refused (PageRefusedFailure) before it is
   * parsed. Unset: no check beyond the fetch's own cap.
   */
  usagePages?: { maxBytes: number; maxValues: number };
}

/** Every item of a paginated listing, or a ProviderFailure past `maxPages` pages (a provider may paginate forever). */
async function collectPages<T>(pages: AsyncIterable<{ data: T[] }>, maxPages: number): Promise<T[]> {
  const items: T[] = [];
  let count = 0;
  for await (const page of pages) {
    if (++count > maxPages) throw new ProviderFailure('unavailable', `the provider listed more than ${maxPages} pages`);
    items.push(...page.data);
  }
  return items;
}

export interface GitHubApp {
  clientId: string;
  clientSecret: string;
  appSlug?: string;
}

const SILENT = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function octokit(endpoints: GitHubEndpoints, token?: string): Octokit {
  return new Octokit({ auth: token, baseUrl: endpoints.apiUrl, userAgent: 'delivery-platform-api', log: SILENT, request: { fetch: endpoints.fetch } });
}

/** Runs an Octokit call, turning whatever it throws into a ProviderFailure. */
export async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const e = error as {
      name?: string;
      status?: number;
      message?: string;
      response?: { headers?: Record<string, string | undefined>; data?: { message?: string } };
    };
    // Octokit reports "no answer at all" (fetch threw) as status 500 with the cause attached.
    if (e.name === 'HttpError' && e.response)
      return Promise.reject(
        classifyHttpFailure({ status: e.status ?? 500, message: e.response.data?.message ?? e.message ?? '', headers: e.response.headers ?? {} }),
      );
    throw classifyTransportFailure(error);
  }
}

/** The last page number of a `Link` header (GitHub's way to count without listing). */
export function lastPage(link: string | undefined): number | undefined {
  const match = link
    ?.split(',')
    .find((part) => /rel="last"/.test(part))
    ?.match(/[?&]page=(\d+)/);
  return match ? Number(match[1]) : undefined;
}

/** GitHub (cloud or Enterprise Server) with a user, OAuth or API token. */
export class GitHubClient implements GitProviderClient {
  /** The REST client with the credentials bound; calls on it go through `call`. */
  readonly api: Octokit;
  readonly ciUsage: CiUsageReader;
  private readonly maxPages: number;

  constructor(endpoints: GitHubEndpoints, token: string) {
    this.api = octokit(endpoints, token);
    this.maxPages = endpoints.maxPages ?? 100;
    this.ciUsage = new GitHubActionsUsage(endpoints, token);
  }

  async currentAccount(): Promise<ProviderAccount> {
    const { data } = await call(() => this.api.rest.users.getAuthenticated());
    return { id: String(data.id), login: data.login };
  }

  async repository(nameWithOwner: string, context: { accountLogin?: string }): Promise<RepositoryInfo> {
    const [owner, repo] = nameWithOwner.split('/');
    const { data } = await call(() => this.api.rest.repos.get({ owner, repo }));
    // One collaborator per page: the Link header's last page is the count. Listing collaborators
    // needs push access; without it the count is 0 rather than a failure of the whole object.
    let collaborators = 0;
    try {
      const page = await call(() => this.api.rest.repos.listCollaborators({ owner, repo, per_page: 1 }));
      collaborators = lastPage(page.headers.link) ?? page.data.length;
    } catch (error) {
      if (!(error instanceof ProviderFailure) || (error.kind !== 'forbidden' && error.kind !== 'not_found')) throw error;
    }
    return {
      collaborators: { totalCount: collaborators },
      defaultBranch: { name: data.default_branch },
      defaultBranchRef: { name: data.default_branch },
      description: data.description ?? '',
      foreignId: String(data.id),
      isInNamespace: context.accountLogin !== undefined && data.owner.login.toLowerCase() === context.accountLogin.toLowerCase(),
      isPrivate: data.private,
      name: data.name,
      nameWithOwner: data.full_name,
      owner: { login: data.owner.login },
      pushedAt: data.pushed_at ?? data.updated_at ?? data.created_at ?? '',
      url: data.html_url,
    };
  }

  async userInstallationIds(): Promise<string[]> {
    const installations = await call(() => collectPages(this.api.paginate.iterator('GET /user/installations', { per_page: 100 }), this.maxPages));
    return installations.map((installation) => String(installation.id));
  }
}

/** A provider's text, cut to what a column of the usage tables keeps (a page cannot make one row large). */
const cut = (text: string, max = 200): string => (text.length > max ? text.slice(0, max) : text);

/**
 * GitHub Actions: GET /repos/{owner}/{repo}/actions/runs and .../runs/{run_id}/jobs?filter=all,
 * one page per call (the import writes each page before it asks for the next). Its own Octokit
 * counts the bytes of every answer and refuses a page past `usagePages` before it is parsed.
 */
class GitHubActionsUsage implements CiUsageReader {
  private readonly api: Octokit;
  private readonly meter: { bytes: number };

  constructor(endpoints: GitHubEndpoints, token: string) {
    const metered = meteredPages(endpoints.fetch, endpoints.usagePages);
    this.meter = metered.meter;
    this.api = octokit({ ...endpoints, fetch: metered.fetch }, token);
  }

  get bytesRead(): number {
    return this.meter.bytes;
  }

  async workflowRunsPage(nameWithOwner: string, page: number, perPage: number, options: CiUsageCall = {}): Promise<{ runs: WorkflowRun[]; hasMore: boolean }> {
    const [owner, repo] = nameWithOwner.split('/');
    const { data, headers } = await call(() =>
      this.api.rest.actions.listWorkflowRunsForRepo({ owner, repo, page, per_page: perPage, request: { signal: options.signal } }),
    );
    const runs = data.workflow_runs.map((run) => ({
      id: cut(String(run.id), 40),
      workflowId: cut(String(run.workflow_id), 40),
      workflowName: cut(run.name ?? `workflow ${run.workflow_id}`),
      event: cut(run.event, 60),
      status: cut(run.status ?? 'unknown', 40),
      conclusion: run.conclusion ? cut(run.conclusion, 40) : null,
      runAttempt: run.run_attempt ?? 1,
      createdAt: cut(run.created_at, 40),
      runStartedAt: run.run_started_at ? cut(run.run_started_at, 40) : null,
      updatedAt: cut(run.updated_at, 40),
    }));
    return { runs, hasMore: /rel="next"/.test(headers.link ?? '') };
  }

  async workflowRunJobsPage(
    nameWithOwner: string,
    runId: string,
    page: number,
    perPage: number,
    options: CiUsageCall = {},
  ): Promise<{ jobs: WorkflowJob[]; hasMore: boolean }> {
    const [owner, repo] = nameWithOwner.split('/');
    const { data, headers } = await call(() =>
      this.api.rest.actions.listJobsForWorkflowRun({
        owner,
        repo,
        run_id: Number(runId),
        filter: 'all',
        page,
        per_page: perPage,
        request: { signal: options.signal },
      }),
    );
    const jobs = data.jobs.map((job) => ({
      id: cut(String(job.id), 40),
      runId: cut(String(job.run_id), 40),
      name: cut(job.name),
      labels: job.labels.slice(0, 20).map((label) => cut(label, 100)),
      runnerGroupName: job.runner_group_name ? cut(job.runner_group_name) : null,
      conclusion: job.conclusion ? cut(job.conclusion, 40) : null,
      startedAt: job.started_at ? cut(job.started_at, 40) : null,
      completedAt: job.completed_at ? cut(job.completed_at, 40) : null,
    }));
    return { jobs, hasMore: /rel="next"/.test(headers.link ?? '') };
  }
}

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

/** GitHub's web flow: the app install page or the OAuth authorize page, and the code exchange. */
export class GitHubAuthorization implements GitProviderAuthorization {
  private readonly api: Octokit;

  constructor(
    private readonly endpoints: GitHubEndpoints,
    private readonly app: GitHubApp,
  ) {
    this.api = octokit(endpoints);
  }

  authorizeUrl({ state, redirectUri, mode }: { state: string; redirectUri: string; mode: 'OAUTH' | 'APP_INSTALLATION' }): string {
    if (mode === 'APP_INSTALLATION' && this.app.appSlug) {
      return `${this.endpoints.webUrl}/apps/${encodeURIComponent(this.app.appSlug)}/installations/new?${new URLSearchParams({ state })}`;
    }
    return `${this.endpoints.webUrl}/login/oauth/authorize?${new URLSearchParams({ client_id: this.app.clientId, redirect_uri: redirectUri, state })}`;
  }

  exchangeCode(code: string, redirectUri: string): Promise<ProviderTokens> {
    return this.token({ code, redirect_uri: redirectUri });
  }

  refresh(refreshToken: string): Promise<ProviderTokens> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async token(params: Record<string, string>): Promise<ProviderTokens> {
    const { data } = await call(() =>
      this.api.request('POST {+url}', {
        url: `${this.endpoints.webUrl}/login/oauth/access_token`,
        headers: { accept: 'application/json' },
        client_id: this.app.clientId,
        client_secret: this.app.clientSecret,
        ...params,
      }),
    );
    const answer = data as TokenAnswer;
    // GitHub answers 200 with an `error` member when the code is bad, expired or used.
    if (!answer.access_token) throw new ProviderFailure('rejected', answer.error_description ?? answer.error ?? 'the provider issued no token');
    const tokens: ProviderTokens = { accessToken: answer.access_token };
    if (answer.refresh_token) tokens.refreshToken = answer.refresh_token;
    if (answer.expires_in) tokens.expiresAt = new Date(Date.now() + answer.expires_in * 1000).toISOString();
    return tokens;
  }
}
