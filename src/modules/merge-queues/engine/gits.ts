import { Injectable } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import type { CodeSource } from '@/generated/prisma/client';
import { CodeSourceErrors } from '@/modules/code-sources/code-sources.errors';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { GitProviders } from '@/modules/git-providers/git-providers.service';
import { GitHubBranchRules } from '@/modules/git-providers/github-branch-rules';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import { GitHubClient } from '@/modules/git-providers/github.provider';
import { LocalMergeQueueGit, type MergeQueueGit } from '@/modules/git-providers/merge-queue-git';
import { IntegrationsService } from '@/modules/integrations/integrations.service';

/** The code source providers merge queues run on. */
export const MERGE_QUEUE_PROVIDERS: readonly CodeSource['provider'][] = ['LOCAL_GIT', 'GITHUB', 'GITHUB_ENTERPRISE'];

/**
 * Which git a queue uses: a MergeQueueGit bound to its code source. LOCAL_GIT runs the `git` CLI
 * on the bare repository at its `url` through the server's one LocalGitRunner (the runner
 * LocalGitClient uses: minimal environment, no hooks, GIT_LOCAL_TIMEOUT_MS); GITHUB and
 * GITHUB_ENTERPRISE use the client integrations give for the code source (its token decrypted and
 * refreshed, the API URL of the cloud or of the integration's server; the GitHub App's installation
 * token for an app installation on github.com when the app is configured).
 */
@Injectable()
export class MergeQueueGits {
  constructor(
    private readonly integrations: IntegrationsService,
    private readonly providers: GitProviders,
  ) {}

  /**
   * A GitHub code source connected through an app installation must be a repository the
   * installation covers (GitHub asked now: the selection may have changed since it was attached);
   * a 422 naming `data.codeSourceId` otherwise.
   */
  async assertCovered(source: CodeSource): Promise<void> {
    if (source.provider !== 'GITHUB' && source.provider !== 'GITHUB_ENTERPRISE') return;
    const integration = await this.integrations.integrationOf(source);
    if (integration && !(await this.integrations.installationCovers(integration, source.foreignId)))
      throw new AppError(CodeSourceErrors.NOT_IN_INSTALLATION, {
        metadata: { codeSourceId: source.id, repository: source.nameWithOwner },
        details: [invalidFields([`data.codeSourceId: ${source.nameWithOwner} is not covered by the integration's GitHub App installation`])],
      });
  }

  /** LOCAL_GIT: only while GIT_LOCAL_ENABLED, on the stored canonical path checked again (under GIT_LOCAL_ROOT, symlinks resolved), never a decoded URL. */
  async forSource(source: CodeSource): Promise<MergeQueueGit> {
    if (source.provider === 'LOCAL_GIT')
      return new LocalMergeQueueGit(await this.providers.local().usablePath(source.nameWithOwner), this.providers.localGitRunner);
    // The merge-queue API refuses other providers before it gets here (dpa:MergeQueue:PROVIDER_NOT_SUPPORTED).
    if (source.provider !== 'GITHUB' && source.provider !== 'GITHUB_ENTERPRISE')
      throw new ProviderFailure('rejected', `merge queues do not run on ${source.provider} code sources`);
    return new GitHubMergeQueueGit(await this.githubApi(source), source.nameWithOwner);
  }

  /** What GitHub requires on the code source's branches (protection and rulesets); null for a code source that is not on GitHub. */
  async branchRules(source: CodeSource): Promise<GitHubBranchRules | null> {
    if (source.provider !== 'GITHUB' && source.provider !== 'GITHUB_ENTERPRISE') return null;
    return new GitHubBranchRules(await this.githubApi(source), source.nameWithOwner);
  }

  /** The Octokit of a GitHub code source's integration (a 404-style error when the code source lost it). */
  private async githubApi(source: CodeSource): Promise<GitHubClient['api']> {
    const client = await this.integrations.clientForSource(source);
    if (!client)
      throw new AppError(CodeSourceErrors.INTEGRATION_NOT_FOUND, {
        message: 'The code source has lost its integration; connect it again.',
        metadata: { codeSourceId: source.id },
      });
    if (!(client instanceof GitHubClient)) throw new Error(`the ${source.provider} integration did not give a GitHub client`);
    return client.api;
  }
}
