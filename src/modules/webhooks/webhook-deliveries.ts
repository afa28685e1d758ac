import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { PrismaService } from '@/common/prisma/prisma.service';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { Prisma } from '@/generated/prisma/client';
import { IntegrationsService } from '@/modules/integrations/integrations.service';
import { MAX_QUEUES_PER_DELIVERY, MergeQueueProviderEvents, type ProviderEventResult } from '@/modules/merge-queues/provider-events/provider-events';
import { MergeQueuePullRequestCommands, type PullRequestOutcome } from '@/modules/merge-queues/provider-events/pull-request-commands';
import { RequiredChecksFromGithub } from '@/modules/merge-queues/required-checks/required-checks-from-github';
import { routingOf } from './github-delivery';
import { parseGithubEvent } from './github-events';

/**
 * Deliveries older than this that were never applied are handed to the worker again by the sweep.
 * Until then a delivery is the API's own job to hand over (stored, then enqueued), whatever the
 * sweep's interval (WEBHOOK_SWEEP_INTERVAL_MS).
 */
export const SWEEP_AFTER_MS = 60_000;

/**
 * Applies stored GitHub deliveries (worker side). A delivery is applied through the merge queues'
 * provider events (the planner's own events under the queue lock) and marked processed with what
 * it did; applying it again (a job retried after a crash between the two) changes nothing, because
 * each of those events is a no-op once applied.
 */
@Injectable()
export class WebhookDeliveries {
  private readonly logger = new Logger(WebhookDeliveries.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly queues: MergeQueueProviderEvents,
    private readonly commands: MergeQueuePullRequestCommands,
    private readonly integrations: IntegrationsService,
    private readonly requiredChecks: RequiredChecksFromGithub,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * `lastAttempt`: the job will not be tried again; until then a provider read that fails (a failing
   * check run's annotations) fails the job, which is retried with backoff. On the last attempt, or
   * once the delivery is as old as the sweep's threshold, the result is applied without them.
   */
  async apply(deliveryRowId: string, { lastAttempt = true }: { lastAttempt?: boolean } = {}): Promise<string> {
    const delivery = await this.prisma.webhookDelivery.findUnique({ where: { id: deliveryRowId } });
    if (!delivery || delivery.processedAt !== null) return 'already applied';
    const { organizationId, integrationId } = delivery;
    const event = parseGithubEvent(delivery.event, delivery.payload);
    const source = { provider: 'github' as const, deliveryId: delivery.deliveryId, event: `${delivery.event}${delivery.action ? `.${delivery.action}` : ''}` };
    // Queues are found by GitHub's id of the repository (a rename or transfer keeps it), never by its name.
    const routing = routingOf(delivery.payload);
    const repositoryId = routing.repositoryId ?? '';
    const target = (repository: string) => ({ organizationId, integrationId, repository, repositoryId, source });
    let outcome: string;
    // An organization ruleset's delivery names no repository: every queue of the integration is concerned.
    const repositoryless = event.kind === 'requiredChecksChanged' && event.repository === undefined;
    if (event.kind !== 'ignored' && !event.kind.startsWith('installation') && !repositoryless && routing.repositoryId === undefined) {
      await this.done(delivery, 'ignored: the delivery names no repository id');
      return 'ignored: the delivery names no repository id';
    }
    if (routing.repositoryId !== undefined && routing.repositoryName !== undefined)
      await this.followRename(organizationId, integrationId, routing.repositoryId, routing.repositoryName, routing.repositoryUrl);
    switch (event.kind) {
      case 'ignored':
        outcome = `ignored: ${event.reason}`;
        break;
      case 'prHead':
        outcome = summary(await this.queues.prHeadChanged(target(event.repository), event.number, event.headSha));
        break;
      case 'prClosed':
        outcome = summary(await this.queues.prClosed(target(event.repository), event.number));
        break;
      case 'prTitle':
        outcome = summary(await this.queues.prTitleChanged(target(event.repository), event.number, event.title));
        break;
      case 'check':
        outcome = summary(
          await this.queues.checkCompleted(target(event.repository), event, {
            retryReads: !lastAttempt && Date.now() - delivery.createdAt.getTime() < SWEEP_AFTER_MS,
          }),
        );
        break;
      case 'push':
        outcome = summary(await this.queues.basePushed(target(event.repository), event.branch, event.after));
        break;
      case 'requiredChecksChanged': {
        const results = await this.requiredChecks.refreshRepository(
          { organizationId, integrationId, ...(!repositoryless && { repositoryId }) },
          { kind: 'webhook', deliveryId: delivery.deliveryId, event: source.event },
          MAX_QUEUES_PER_DELIVERY,
        );
        outcome =
          results.length === 0
            ? `ignored: ${event.reason}; no merge queue takes its checks from branch protection`
            : `${event.reason}: ${results.map((r) => `${r.queueId}: ${r.changed ? 'applied' : 'unchanged'} (${r.note})`).join('; ')}`;
        break;
      }
      case 'prLabel':
        outcome = requestSummary(
          await this.commands.requested(target(event.repository), {
            via: 'label',
            action: event.added ? 'enqueue' : 'dequeue',
            number: event.number,
            login: event.actor.login,
            label: event.label,
          }),
        );
        break;
      case 'prCommand':
        outcome = requestSummary(
          await this.commands.requested(target(event.repository), {
            via: 'comment',
            action: event.command === 'queue' ? 'enqueue' : 'dequeue',
            number: event.number,
            login: event.actor.login,
            commentId: event.commentId,
          }),
        );
        break;
      case 'installationGone':
      case 'installationSuspended': {
        const integration = await this.integrations.find(organizationId, integrationId);
        if (integration.installationId !== event.installationId) {
          outcome = 'ignored: not the installation of the integration';
          break;
        }
        await this.integrations.transition(
          { system: 'github webhook' },
          integration,
          event.kind === 'installationGone' ? 'installationGone' : 'credentialsRefused',
          event.reason,
          {},
        );
        outcome = `integration: ${event.reason}`;
        break;
      }
    }
    await this.done(delivery, outcome);
    this.logger.log({ deliveryId: delivery.deliveryId, event: source.event, outcome }, 'webhook delivery applied');
    return outcome;
  }

  /** Marks the delivery applied with what it did, and drops its payload: the row stays as the id ledger. */
  private async done(delivery: { id: string; organizationId: string }, outcome: string): Promise<void> {
    await this.prisma.webhookDelivery.updateMany({
      where: { id: delivery.id, organizationId: delivery.organizationId },
      data: { processedAt: new Date(), outcome: outcome.slice(0, 2000), payload: Prisma.DbNull },
    });
  }

  /**
   * The repository was renamed or transferred (its id is the same, its name is not): the integration's
   * code sources of it take the new name, so later provider calls use it. When the organization
   * already has a code source of that name (the old one was since reused), the name is left as it is.
   */
  private async followRename(organizationId: string, integrationId: string, repositoryId: string, name: string, url?: string): Promise<void> {
    try {
      const { count } = await this.prisma.codeSource.updateMany({
        where: { organizationId, integrationId, foreignId: repositoryId, provider: { in: ['GITHUB', 'GITHUB_ENTERPRISE'] }, nameWithOwner: { not: name } },
        data: { nameWithOwner: name, ...(url !== undefined && { url }) },
      });
      if (count > 0) this.logger.log({ organizationId, integrationId, repositoryId, name }, 'code source renamed as GitHub names the repository now');
    } catch (error) {
      if (!isUniqueViolation(error, 'nameWithOwner')) throw error;
      this.logger.warn({ organizationId, integrationId, repositoryId, name }, 'code source not renamed: the organization has another code source of that name');
    }
  }

  /**
   * Deletes applied deliveries older than WEBHOOK_DELIVERY_RETENTION_MS (at least the 3 days within
   * which GitHub lets a delivery be redelivered, so a redelivery always finds its row and is applied
   * once); returns how many.
   */
  async purgeApplied(now = Date.now()): Promise<number> {
    const { count } = await this.prisma.webhookDelivery.deleteMany({
      where: { createdAt: { lt: new Date(now - this.config.webhooks.deliveryRetentionMs) }, processedAt: { not: null } },
    });
    return count;
  }

  /** Stored deliveries not applied within SWEEP_AFTER_MS (their job was lost), oldest first. */
  async unapplied(now = Date.now(), take = 100): Promise<string[]> {
    const where: Prisma.WebhookDeliveryWhereInput = { processedAt: null, createdAt: { lt: new Date(now - SWEEP_AFTER_MS) } };
    return (await this.prisma.webhookDelivery.findMany({ where, select: { id: true }, orderBy: { createdAt: 'asc' }, take })).map((d) => d.id);
  }
}

function requestSummary(outcome: PullRequestOutcome): string {
  return outcome.ignored !== undefined ? `ignored: ${outcome.ignored}` : summary(outcome.results);
}

function summary(results: ProviderEventResult[]): string {
  if (results.length === 0) return 'ignored: no merge queue on the repository';
  return results.map((r) => `${r.queueId}: ${r.applied ? 'applied' : 'unchanged'} (${r.note})`).join('; ');
}
