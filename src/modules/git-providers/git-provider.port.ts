import { AppError } from '@/common/errors/app-error';
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
  /** CI usage history, for providers that have it (GitHub Actions); absent otherwise. */
  readonly ciUsage?: CiUsageReader;
}

/** A workflow run as the provider lists it (GitHub Actions' REST shape, mapped). */
export interface WorkflowRun {
  id: string;
  workflowId: string;
  workflowName: string;
  event: string;
  status: string;
  conclusion: string | null;
  runAttempt: number;
  createdAt: string;
  runStartedAt: string | null;
  updatedAt: string;
}

/** One job of one attempt of a workflow run. */
export interface WorkflowJob {
  id: string;
  runId: string;
  name: string;
  labels: string[];
  runnerGroupName: string | null;
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
}

/** What a CI usage call may be given: a signal that drops it (the import's deadline). */
export interface CiUsageCall {
  signal?: AbortSignal;
}

/**
 * A repository's CI history, page by page, so that an import writes each page as it arrives and
 * checkpoints between pages: nothing but the page being read is ever held.
 */
export interface CiUsageReader {
  /** One page of workflow runs, newest first (1-based pages); `hasMore` says whether another page follows. */
  workflowRunsPage(nameWithOwner: string, page: number, perPage: number, call?: CiUsageCall): Promise<{ runs: WorkflowRun[]; hasMore: boolean }>;
  /** One page of the jobs of every attempt of a run (1-based pages). */
  workflowRunJobsPage(
    nameWithOwner: string,
    runId: string,
    page: number,
    perPage: number,
    call?: CiUsageCall,
  ): Promise<{ jobs: WorkflowJob[]; hasMore: boolean }>;
  /** Response bytes this reader has read so far (the import's byte budget counts them). */
  readonly bytesRead: number;
}

/** The provider's OAuth / app installation flow. */
export interface GitProviderAuthorization {
  /** Where to send the user's browser: the app install page or the OAuth authorize page. */
  authorizeUrl(input: { state: string; redirectUri: string; mode: 'OAUTH' | 'APP_INSTALLATION' }): string;
  exchangeCode(code: string, redirectUri: string): Promise<ProviderTokens>;
  refresh(refreshToken: string): Promise<ProviderTokens>;
}

export type ProviderFailureKind =
  'not_found' | 'unauthorized' | 'forbidden' | 'rate_limited' | 'unavailable' | 'timeout' | 'refused' | 'unresolved' | 'rejected';

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

/** The provider failure behind `error`: the error itself, or the cause of the AppError it became; undefined for anything else. */
export function providerFailureOf(error: unknown): ProviderFailure | undefined {
  if (error instanceof ProviderFailure) return error;
  return error instanceof AppError && error.options.cause instanceof ProviderFailure ? error.options.cause : undefined;
}

/**
 * A page a usage import refuses: larger than it accepts, or holding more JSON values than it
 * parses. Not transient: asking again would get the same page.
 */
export class PageRefusedFailure extends ProviderFailure {
  constructor(reason: string) {
    super('rejected', reason);
  }
}
