import { Injectable } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { CodeSource } from '@/generated/prisma/client';
import { CodeSourceErrors } from '@/modules/code-sources/code-sources.errors';
import { IntegrationsService } from '@/modules/integrations/integrations.service';
import { ProviderFailure } from './git-provider.port';
import { GitProviders } from './git-providers.service';
import { GitHubMergeQueueGit } from './github-merge-queue-git';
import { GitHubClient } from './github.provider';
import { LocalMergeQueueGit, type MergeQueueGit } from './merge-queue-git';

/** The code source providers merge queues run on. */
export const MERGE_QUEUE_PROVIDERS: readonly CodeSource['provider'][] = ['LOCAL_GIT', 'GITHUB', 'GITHUB_ENTERPRISE'];

/**
 * Gives the merge-queue engine a MergeQueueGit bound to a code source: LOCAL_GIT runs the `git`
 * CLI on the bare repository at its `url` through the server's one LocalGitRunner (the runner
 * LocalGitClient uses: minimal environment, no hooks, GIT_LOCAL_TIMEOUT_MS); GITHUB and
 * GITHUB_ENTERPRISE use the integration's client (its token decrypted and refreshed by
 * IntegrationsService, the API URL of the cloud or of the integration's server), exactly as the
 * other provider calls get theirs; an APP_INSTALLATION integration on github.com acts as the
 * GitHub App with an installation token when the app is configured (github-app.ts). Provided by the merge-queue engine's module (it needs the
 * integrations' credentials); it lives here, beside the provider port, so that each provider is
 * implemented in one module.
 */
@Injectable()
export class MergeQueueGits {
  constructor(
    private readonly prisma: PrismaService,
    private readonly integrations: IntegrationsService,
    private readonly providers: GitProviders,
  ) {}

  /** LOCAL_GIT: only while GIT_LOCAL_ENABLED, on the stored canonical path checked again (under GIT_LOCAL_ROOT, symlinks resolved), never a decoded URL. */
  async forSource(source: CodeSource): Promise<MergeQueueGit> {
    if (source.provider === 'LOCAL_GIT')
      return new LocalMergeQueueGit(await this.providers.local().usablePath(source.nameWithOwner), this.providers.localGitRunner);
    // The merge-queue API refuses other providers before it gets here (dpa:MergeQueue:PROVIDER_NOT_SUPPORTED).
    if (source.provider !== 'GITHUB' && source.provider !== 'GITHUB_ENTERPRISE')
      throw new ProviderFailure('rejected', `merge queues do not run on ${source.provider} code sources`);
    const integration = source.integrationId
      ? await this.prisma.integration.findFirst({ where: { id: source.integrationId, organizationId: source.organizationId } })
      : null;
    if (!integration)
      throw new AppError(CodeSourceErrors.INTEGRATION_NOT_FOUND, {
        message: 'The code source has lost its integration; connect it again.',
        metadata: { codeSourceId: source.id },
      });
    // An app installation acts as the app (installation token), so commits and statuses show the
    // app, not the person who connected it; without a configured app it keeps the person's token.
    const app =
      source.provider === 'GITHUB' && integration.authMethod === 'APP_INSTALLATION' && integration.installationId ? this.providers.githubApp() : undefined;
    const client = app
      ? this.providers.client({ provider: 'GITHUB' }, await app.installationToken(integration.installationId as string))
      : await this.integrations.clientFor(integration);
    if (!(client instanceof GitHubClient)) throw new Error(`the ${source.provider} integration did not give a GitHub client`);
    return new GitHubMergeQueueGit(client.api, source.nameWithOwner);
  }
}
