import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { JobQueue, NoData, PayloadsOf } from '@/common/queues/job-handlers';
import { QueueName, WebhooksJob } from '@/common/queues/queue-names';
import type { Prisma } from '@/generated/prisma/client';
import { IntegrationCredentials } from '@/modules/integrations/integration-credentials';
import type { WebhookReceiptDto } from './webhook-delivery.dto';
import { installationOf, repositoryOf } from './github-events';
import { signatureMatches } from './webhook-signature';
import { WebhookErrors } from './webhooks.errors';

/** At most this many integrations are tried for one delivery (the same repository connected by many organizations). */
const MAX_CANDIDATES = 20;
const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;
const EVENT_NAME = /^[a-z_]{1,64}$/;

export interface GithubDeliveryHeaders {
  signature?: string;
  event?: string;
  deliveryId?: string;
}

/** What each job of the webhooks queue carries (its processor is WebhooksProcessor). */
export type WebhooksPayloads = PayloadsOf<typeof WebhooksJob, { [WebhooksJob.ApplyGithubDelivery]: { deliveryRowId: string }; [WebhooksJob.Sweep]: NoData }>;

/**
 * Intake of GitHub webhook deliveries: verify, store once, hand to the worker. The integration a
 * delivery belongs to is found from the app installation id or the repository it names, among
 * GitHub integrations that have a webhook secret; the one whose secret verifies the raw body is
 * the one (and the organization) it applies to. Nothing is written for a delivery that verifies
 * against none.
 */
@Injectable()
export class WebhooksService {
  private readonly logger = new Logger(WebhooksService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly credentials: IntegrationCredentials,
    @InjectQueue(QueueName.Webhooks) private readonly queue: JobQueue<WebhooksPayloads>,
  ) {}

  async receiveGithub(headers: GithubDeliveryHeaders, rawBody: Buffer | undefined, payload: unknown): Promise<WebhookReceiptDto> {
    if (!rawBody || !headers.signature)
      throw new AppError(WebhookErrors.SIGNATURE_INVALID, { message: 'The delivery is not signed (X-Hub-Signature-256 is missing); nothing was changed.' });
    const integration = await this.verifiedIntegration(rawBody, headers.signature, payload);
    if (!integration) throw new AppError(WebhookErrors.SIGNATURE_INVALID);
    const bad: string[] = [];
    if (!headers.event || !EVENT_NAME.test(headers.event)) bad.push('X-GitHub-Event: is required (a GitHub event name)');
    if (!headers.deliveryId || !DELIVERY_ID.test(headers.deliveryId)) bad.push('X-GitHub-Delivery: is required (the delivery GUID)');
    if (bad.length) throw new AppError(WebhookErrors.HEADER_MISSING, { details: [invalidFields(bad)] });
    const event = headers.event as string;
    const deliveryId = headers.deliveryId as string;
    const action = typeof (payload as { action?: unknown })?.action === 'string' ? (payload as { action: string }).action.slice(0, 64) : null;
    let row: { id: string; processedAt: Date | null };
    let duplicate = false;
    try {
      row = await this.prisma.webhookDelivery.create({
        data: {
          organizationId: integration.organizationId,
          integrationId: integration.id,
          deliveryId,
          event,
          action,
          payload: (payload ?? {}) as Prisma.InputJsonValue,
        },
        select: { id: true, processedAt: true },
      });
    } catch (error) {
      if (!isUniqueViolation(error, 'deliveryId')) throw error;
      duplicate = true;
      row = await this.prisma.webhookDelivery.findFirstOrThrow({
        where: { integrationId: integration.id, deliveryId },
        select: { id: true, processedAt: true },
      });
    }
    // A redelivery of one not yet applied (the job was lost with Redis) is handed over again; the
    // job id is the row id, so BullMQ holds at most one.
    if (row.processedAt === null) await this.enqueue(row.id);
    return { deliveryId, event, duplicate };
  }

  private async enqueue(deliveryRowId: string): Promise<void> {
    try {
      await this.queue.add(WebhooksJob.ApplyGithubDelivery, { deliveryRowId }, { jobId: `delivery-${deliveryRowId}` });
    } catch (error) {
      // Stored: the worker's sweep applies deliveries left unprocessed.
      this.logger.warn({ err: error, deliveryRowId }, 'webhook delivery stored but not enqueued; the sweep applies it');
    }
  }

  /** The integration whose webhook secret signed `rawBody`, among those the payload may belong to. */
  private async verifiedIntegration(rawBody: Buffer, signature: string, payload: unknown) {
    const installationId = installationOf(payload);
    const repository = repositoryOf(payload);
    const where: Prisma.IntegrationWhereInput[] = [];
    if (installationId) where.push({ installationId });
    if (repository) where.push({ codeSources: { some: { nameWithOwner: repository } } });
    if (where.length === 0) return undefined;
    const candidates = await this.prisma.integration.findMany({
      where: { provider: { in: ['GITHUB', 'GITHUB_ENTERPRISE'] }, encryptedWebhookSecret: { not: null }, OR: where },
      select: { id: true, organizationId: true, encryptedWebhookSecret: true },
      orderBy: { createdAt: 'asc' },
      take: MAX_CANDIDATES,
    });
    // Every candidate is compared (no early exit), so the time taken says nothing about which matched.
    let found: (typeof candidates)[number] | undefined;
    for (const candidate of candidates) {
      const secret = this.credentials.webhookSecret(candidate);
      if (secret !== undefined && signatureMatches(rawBody, signature, secret)) found ??= candidate;
    }
    return found;
  }
}
