import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Prisma } from '@/generated/prisma/client';
import { IntegrationsService } from '@/modules/integrations/integrations.service';
import { MergeQueueProviderEvents, type ProviderEventResult } from '@/modules/merge-queues/provider-events/provider-events';
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
    private readonly integrations: IntegrationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async apply(deliveryRowId: string): Promise<string> {
    const delivery = await this.prisma.webhookDelivery.findUnique({ where: { id: deliveryRowId } });
    if (!delivery || delivery.processedAt !== null) return 'already applied';
    const { organizationId, integrationId } = delivery;
    const event = parseGithubEvent(delivery.event, delivery.payload);
    const source = { provider: 'github' as const, deliveryId: delivery.deliveryId, event: `${delivery.event}${delivery.action ? `.${delivery.action}` : ''}` };
    const target = (repository: string) => ({ organizationId, integrationId, repository, source });
    let outcome: string;
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
      case 'check':
        outcome = summary(await this.queues.checkCompleted(target(event.repository), event));
        break;
      case 'push':
        outcome = summary(await this.queues.basePushed(target(event.repository), event.branch, event.after));
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
    await this.prisma.webhookDelivery.updateMany({
      where: { id: delivery.id, organizationId },
      data: { processedAt: new Date(), outcome: outcome.slice(0, 2000) },
    });
    this.logger.log({ deliveryId: delivery.deliveryId, event: source.event, outcome }, 'webhook delivery applied');
    return outcome;
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

function summary(results: ProviderEventResult[]): string {
  if (results.length === 0) return 'ignored: no merge queue on the repository';
  return results.map((r) => `${r.queueId}: ${r.applied ? 'applied' : 'unchanged'} (${r.note})`).join('; ');
}
