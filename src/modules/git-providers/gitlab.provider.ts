import { Gitlab } from '@gitbeaker/core';
import { createRequesterFn, defaultOptionsHandler, type FormattedResponse, type OptionsHandlerFn, type RequestHandlerFn } from '@gitbeaker/requester-utils';
import type { GitProviderClient, ProviderAccount, RepositoryInfo } from './git-provider.port';
import { classifyHttpFailure, classifyTransportFailure } from './provider-failures';

/**
 * gitbeaker's request step, over our fetch (the connection guard sees every connection) and
 * without its own retry loop: a rate-limited or failing GitLab is reported to the caller at once
 * (503 with Retry-After, 502) instead of being retried for minutes inside a request.
 */
function requestHandler(fetchFn: typeof fetch): RequestHandlerFn {
  return async (endpoint, options = {}) => {
    const { prefixUrl, searchParams, method, headers, body } = options as {
      prefixUrl?: string;
      searchParams?: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
    };
    const url = new URL(endpoint, prefixUrl?.endsWith('/') ? prefixUrl : `${prefixUrl}/`);
    url.search = searchParams ?? '';
    let response: Response;
    try {
      response = await fetchFn(url, { method, headers, body });
    } catch (error) {
      throw classifyTransportFailure(error);
    }
    const responseHeaders = Object.fromEntries(response.headers.entries());
    const text = await response.text();
    const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
    const parsed: unknown = isJson && text ? JSON.parse(text) : text;
    if (!response.ok) {
      const message =
        typeof parsed === 'object' && parsed !== null
          ? String((parsed as { message?: unknown; error?: unknown }).message ?? (parsed as { error?: unknown }).error ?? '')
          : String(parsed);
      throw classifyHttpFailure({ status: response.status, message, headers: responseHeaders });
    }
    return { body: parsed, headers: responseHeaders, status: response.status } as FormattedResponse;
  };
}

interface GitLabProject {
  id: number;
  name: string;
  path_with_namespace: string;
  default_branch?: string | null;
  description?: string | null;
  visibility?: string;
  namespace: { full_path: string; kind?: string };
  last_activity_at?: string;
  web_url: string;
}

/** GitLab (self-managed) through @gitbeaker/core with a personal, group or project access token. */
export class GitLabClient implements GitProviderClient {
  private readonly api: InstanceType<typeof Gitlab>;

  constructor(options: { hostUrl: string; token: string; fetch: typeof fetch }) {
    this.api = new Gitlab({
      host: options.hostUrl,
      token: options.token,
      requesterFn: createRequesterFn(defaultOptionsHandler as unknown as OptionsHandlerFn, requestHandler(options.fetch)),
    });
  }

  async currentAccount(): Promise<ProviderAccount> {
    const user = (await this.api.Users.showCurrentUser()) as unknown as { id: number; username: string };
    return { id: String(user.id), login: user.username };
  }

  async repository(nameWithOwner: string, context: { accountLogin?: string }): Promise<RepositoryInfo> {
    const project = (await this.api.Projects.show(nameWithOwner)) as unknown as GitLabProject;
    const members = (await this.api.ProjectMembers.all(project.id, { includeInherited: true, perPage: 1, maxPages: 1, showExpanded: true })) as unknown as {
      data: unknown[];
      paginationInfo: { total: number };
    };
    const branch = project.default_branch ?? 'main';
    return {
      collaborators: { totalCount: Number(members.paginationInfo.total) || members.data.length },
      defaultBranch: { name: branch },
      defaultBranchRef: { name: branch },
      description: project.description ?? '',
      foreignId: String(project.id),
      isInNamespace: context.accountLogin !== undefined && project.namespace.full_path.toLowerCase() === context.accountLogin.toLowerCase(),
      isPrivate: project.visibility !== 'public',
      name: project.name,
      nameWithOwner: project.path_with_namespace,
      owner: { login: project.namespace.full_path },
      pushedAt: project.last_activity_at ?? '',
      url: project.web_url,
    };
  }

  userInstallationIds(): Promise<string[]> {
    return Promise.resolve([]);
  }
}
