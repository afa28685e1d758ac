/**
 * The git provider port: everything the API asks of a git hosting provider goes through these
 * interfaces, one implementation per provider (GitHub over Octokit, GitLab over gitbeaker,
 * LOCAL_GIT over the git CLI). Implementations throw `ProviderFailure`, never a client's own error.
 */
export type ProviderKind = 'GITHUB' | 'GITHUB_ENTERPRISE' | 'GITLAB' | 'LOCAL_GIT';

/** The spec's Repository object, as every provider maps it. */
export interface RepositoryInfo {
  collaborators: { totalCount: number };
  defaultBranch: { name: string };
  defaultBranchRef: { name: string };
  description: string;
  foreignId: string;
  isInNamespace: boolean;
  isPrivate: boolean;
  name: string;
  nameWithOwner: string;
  owner: { login: string };
  pushedAt: string;
  url: string;
}

export interface ProviderAccount {
  id: string;
  login: string;
}

/** Credentials as stored (encrypted) for an integration. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken?: string;
  /** ISO instant; absent for tokens that do not expire. */
  expiresAt?: string;
}

/** A provider account's API, with its credentials bound. */
export interface GitProviderClient {
  /** The account the credentials belong to: validates them. */
  currentAccount(): Promise<ProviderAccount>;
  /** `nameWithOwner` is `owner/name` (LOCAL_GIT: the bare repository's absolute path). */
  repository(nameWithOwner: string, context: { accountLogin?: string }): Promise<RepositoryInfo>;
  /** Ids of the provider app installations the credentials' user can access. */
  userInstallationIds(): Promise<string[]>;
}

/** The provider's OAuth / app installation flow. */
export interface GitProviderAuthorization {
  /** Where to send the user's browser: the app install page or the OAuth authorize page. */
  authorizeUrl(input: { state: string; redirectUri: string; mode: 'OAUTH' | 'APP_INSTALLATION' }): string;
  exchangeCode(code: string, redirectUri: string): Promise<ProviderTokens>;
  refresh(refreshToken: string): Promise<ProviderTokens>;
}

export type ProviderFailureKind = 'not_found' | 'unauthorized' | 'forbidden' | 'rate_limited' | 'unavailable' | 'timeout' | 'refused' | 'unresolved' | 'rejected';

/**
 * A provider call that did not succeed, classified: the services decide what each kind means for
 * the caller (404, 422, 424/502, 503 with Retry-After) and for the integration's status.
 */
export class ProviderFailure extends Error {
  constructor(
    readonly kind: ProviderFailureKind,
    /** The provider's own reason (never a credential). */
    readonly reason: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${kind}: ${reason}`);
  }
}
