import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';
import { bodyProblemToAppError, scanJson } from '@/common/http/body-guard';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { JobQueue, NoData, PayloadsOf } from '@/common/queues/job-handlers';
import { QueueName, WebhooksJob } from '@/common/queues/queue-names';
import { RateLimitStore } from '@/common/throttling/rate-limit.store';
import { rateLimitKey } from '@/common/throttling/rate-limits';
import type { Prisma } from '@/generated/prisma/client';
import { IntegrationCredentials } from '@/modules/integrations/integration-credentials';
import type { WebhookReceiptDto } from './webhook-delivery.dto';
import { routingOf, staleness, storedPayload } from './github-delivery';
import { signatureMatches } from './webhook-signature';
import { WebhookErrors } from './webhooks.errors';

const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;
const EVENT_NAME = /^[a-z_]{1,64}$/;
const ROW_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** GitHub payloads nest about 8 levels; anything deeper than this is not one of its deliveries. */
const BODY_MAX_DEPTH = 64;
/**
 * On the shared URL a delivery signed with no App secret is read (parsed, before it is verified) only
 * up to the API's usual 1 MB, and verified against every integration it may belong to (no cap), as
 * long as all of them cost at most this many bytes of HMAC (about 100 ms of SHA-256): over it, the
 * delivery must go to its integration's own URL (`?integration=<id>`), which costs one HMAC. So
 * integrations an attacker creates for a victim's repository can never be chosen instead of the
 * victim's (every candidate is compared), and can at most make the shared URL refuse (401) a delivery
 * whose integration URL still takes it.
 */
export const SHARED_URL_MAX_BYTES = 1_048_576;
export const SHARED_URL_HMAC_BUDGET_BYTES = 64 * 1_048_576;
const MINUTE_MS = 60_000;
const GITHUB_PROVIDERS = ['GITHUB', 'GITHUB_ENTERPRISE'] as const;

export interface GithubDeliveryHeaders {
  signature?: string;
  event?: string;
  deliveryId?: string;
}

/** What each job of the webhooks queue carries (its processor is WebhooksProcessor). */
export type WebhooksPayloads = PayloadsOf<typeof WebhooksJob, { [WebhooksJob.ApplyGithubDelivery]: { deliveryRowId: string }; [WebhooksJob.Sweep]: NoData }>;

interface Target {
  id: string;
  organizationId: string;
  provider: 'GITHUB' | 'GITHUB_ENTERPRISE';
}

/**
 * Intake of GitHub webhook deliveries: verify, store once per integration, hand to the worker.
 *
 * Verification and routing (docs/webhooks.md):
 * 1. Signed with the GitHub App's secret (GITHUB_APP_WEBHOOK_SECRET, or `..._PREVIOUS` during a
 *    rotation): one App serves many organizations, so the delivery goes to every GITHUB integration
 *    of its `installation.id`, whichever organization connected it.
 * 2. `?integration=<id>`: that integration's own secret, one HMAC.
 * 3. Otherwise the integrations it may belong to by `installation.id`, then by `repository.id` (a
 *    code source's GitHub id, never its name), each compared (see SHARED_URL_HMAC_BUDGET_BYTES).
 * Nothing is written for a delivery that verifies against none. A verified one is then checked for
 * its age (a replay), each target organization's budget (rate in Redis, stored and not yet applied),
 * and stored as the part the worker reads (github-delivery.ts `storedPayload`).
 */
@Injectable()
export class WebhooksService {
  private readonly logger = new Logger(WebhooksService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly credentials: IntegrationCredentials,
    private readonly budgets: RateLimitStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(QueueName.Webhooks) private readonly queue: JobQueue<WebhooksPayloads>,
  ) {}

  async receiveGithub(headers: GithubDeliveryHeaders, rawBody: Buffer | undefined, integrationId?: string): Promise<WebhookReceiptDto> {
    if (!rawBody || !headers.signature)
      throw new AppError(WebhookErrors.SIGNATURE_INVALID, { message: 'The delivery is not signed (X-Hub-Signature-256 is missing); nothing was changed.' });
    const signature = headers.signature;
    const appSigned = integrationId === undefined && this.config.webhooks.appSecrets.some((secret) => signatureMatches(rawBody, signature, secret));
    if (!appSigned && integrationId === undefined && rawBody.length > SHARED_URL_MAX_BYTES)
      throw new AppError(WebhookErrors.INTEGRATION_URL_REQUIRED, {
        message: `A delivery of more than ${SHARED_URL_MAX_BYTES} bytes not signed with the GitHub App's secret is verified only at its integration's URL (POST /webhooks/github?integration=<id>); nothing was changed.`,
      });
    let targets: Target[];
    let payload: unknown;
    if (integrationId !== undefined) {
      const integration = ROW_ID.test(integrationId) ? await this.integrationWithSecret(integrationId) : undefined;
      if (!integration || !signatureMatches(rawBody, signature, this.credentials.webhookSecret(integration) ?? ''))
        throw new AppError(WebhookErrors.SIGNATURE_INVALID);
      payload = this.parse(rawBody);
      targets = [integration];
    } else {
      payload = this.parse(rawBody);
      targets = appSigned ? await this.installationTargets(payload) : await this.verifiedCandidates(rawBody, signature, payload);
    }
    const bad: string[] = [];
    if (!headers.event || !EVENT_NAME.test(headers.event)) bad.push('X-GitHub-Event: is required (a GitHub event name)');
    if (!headers.deliveryId || !DELIVERY_ID.test(headers.deliveryId)) bad.push('X-GitHub-Delivery: is required (the delivery GUID)');
    if (bad.length) throw new AppError(WebhookErrors.HEADER_MISSING, { details: [invalidFields(bad)] });
    const event = headers.event as string;
    const deliveryId = headers.deliveryId as string;
    // A replay: older than any redelivery GitHub makes (its id may be purged since).
    const stale = staleness(event, payload, appSigned ? 'GITHUB' : (targets[0]?.provider ?? 'GITHUB'), Date.now());
    if (stale)
      throw new AppError(WebhookErrors.DELIVERY_EXPIRED, {
        message: `The ${event} delivery happened at ${stale.at}, longer ago than GitHub redelivers (${Math.round(stale.maxAgeMs / 3_600_000)} hours): it can only be a replay; nothing was changed.`,
        metadata: { deliveryId, at: stale.at },
      });
    // An App delivery for an installation no organization connected (yet): GitHub's, and nothing to do.
    if (targets.length === 0) return { deliveryId, event, duplicate: false };
    const action = typeof (payload as { action?: unknown })?.action === 'string' ? (payload as { action: string }).action.slice(0, 64) : null;
    const stored = storedPayload(event, payload) as Prisma.InputJsonValue;
    let duplicates = 0;
    let refused: { retryAfterSeconds: number; why: string } | undefined;
    for (const target of targets) {
      const existing = await this.prisma.webhookDelivery.findUnique({
        where: { integrationId_deliveryId: { integrationId: target.id, deliveryId } },
        select: { id: true, processedAt: true },
      });
      if (existing) {
        duplicates++;
        // A redelivery of one not yet applied (its job lost with Redis) is handed over again; the job id is the row id.
        if (existing.processedAt === null) await this.enqueue(existing.id);
        continue;
      }
      const over = await this.overBudget(target.organizationId);
      if (over) {
        refused = over;
        continue;
      }
      const row = await this.store(target, deliveryId, event, action, stored);
      if (row === 'duplicate') duplicates++;
      else await this.enqueue(row);
    }
    if (refused)
      throw new AppError(WebhookErrors.BUDGET_EXCEEDED, {
        message: `${refused.why}; nothing was stored for it. Redeliver it after ${refused.retryAfterSeconds} s.`,
        headers: { 'Retry-After': String(refused.retryAfterSeconds) },
        metadata: { retryAfterSeconds: refused.retryAfterSeconds },
      });
    return { deliveryId, event, duplicate: duplicates === targets.length };
  }

  /** The raw bytes as JSON, within the webhook's own limits (WEBHOOK_BODY_MAX_KEYS, 64 levels), counted before parsing. */
  private parse(rawBody: Buffer): unknown {
    const limits = { maxDepth: BODY_MAX_DEPTH, maxKeys: this.config.webhooks.bodyMaxKeys };
    const problem = scanJson(rawBody, limits);
    if (problem) throw bodyProblemToAppError(problem, limits);
    try {
      return JSON.parse(rawBody.toString('utf8')) as unknown;
    } catch {
      throw new AppError(RequestErrors.VALIDATION_FAILED, { message: 'The delivery body is not JSON.', details: [invalidFields(['(body): is not JSON'])] });
    }
  }

  private async store(target: Target, deliveryId: string, event: string, action: string | null, payload: Prisma.InputJsonValue): Promise<string | 'duplicate'> {
    try {
      const row = await this.prisma.webhookDelivery.create({
        data: { organizationId: target.organizationId, integrationId: target.id, deliveryId, event, action, payload },
        select: { id: true },
      });
      return row.id;
    } catch (error) {
      // The same delivery arriving twice at once: the other request stored (and enqueued) it.
      if (isUniqueViolation(error, 'deliveryId')) return 'duplicate';
      throw error;
    }
  }

  /**
   * The organization's budget: deliveries per minute (a fixed window in Redis, shared by every API
   * process; fails open when Redis cannot answer, as the other rate limits do) and deliveries stored
   * and not yet applied. Undefined while within it.
   */
  private async overBudget(organizationId: string): Promise<{ retryAfterSeconds: number; why: string } | undefined> {
    const { orgDeliveriesPerMinute, orgPendingMax } = this.config.webhooks;
    const key = rateLimitKey(this.config.queuePrefix, `webhook-org:${organizationId}`);
    const hit = await this.budgets.increment(key, MINUTE_MS, orgDeliveriesPerMinute, MINUTE_MS, 'webhookDeliveries');
    if (hit.isBlocked)
      return {
        retryAfterSeconds: Math.max(1, hit.timeToBlockExpire),
        why: `The organization has had ${orgDeliveriesPerMinute} webhook deliveries stored within a minute (WEBHOOK_ORG_DELIVERIES_PER_MINUTE)`,
      };
    const pending = await this.prisma.webhookDelivery.count({ where: { organizationId, processedAt: null }, take: orgPendingMax });
    if (pending >= orgPendingMax)
      return { retryAfterSeconds: 60, why: `The organization has ${orgPendingMax} webhook deliveries stored and not yet applied (WEBHOOK_ORG_PENDING_MAX)` };
    return undefined;
  }

  private async enqueue(deliveryRowId: string): Promise<void> {
    try {
      await this.queue.add(WebhooksJob.ApplyGithubDelivery, { deliveryRowId }, { jobId: `delivery-${deliveryRowId}` });
    } catch (error) {
      // Stored: the worker's sweep applies deliveries left unprocessed.
      this.logger.warn({ err: error, deliveryRowId }, 'webhook delivery stored but not enqueued; the sweep applies it');
    }
  }

  private async integrationWithSecret(id: string) {
    const row = await this.prisma.integration.findFirst({
      where: { id, provider: { in: [...GITHUB_PROVIDERS] }, encryptedWebhookSecret: { not: null } },
      select: { id: true, organizationId: true, provider: true, encryptedWebhookSecret: true },
    });
    return row ? { ...row, provider: row.provider as Target['provider'] } : undefined;
  }

  /** An App delivery: every GITHUB integration of its installation, in every organization (none without an installation id). */
  private async installationTargets(payload: unknown): Promise<Target[]> {
    const { installationId } = routingOf(payload);
    if (!installationId) return [];
    const rows = await this.prisma.integration.findMany({
      where: { provider: 'GITHUB', installationId },
      select: { id: true, organizationId: true },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((r) => ({ ...r, provider: 'GITHUB' as const }));
  }

  /**
   * The integration whose own webhook secret signed `rawBody`, among all those the payload may belong
   * to: by installation id, and by repository id among their code sources. Every candidate is compared
   * (no early exit, no cap), so neither the time taken nor integrations added by someone else decide
   * which one matches; see SHARED_URL_HMAC_BUDGET_BYTES for the bound on the work.
   */
  private async verifiedCandidates(rawBody: Buffer, signature: string, payload: unknown): Promise<Target[]> {
    const { installationId, repositoryId } = routingOf(payload);
    const where: Prisma.IntegrationWhereInput[] = [];
    if (installationId) where.push({ installationId });
    if (repositoryId) where.push({ codeSources: { some: { foreignId: repositoryId, provider: { in: [...GITHUB_PROVIDERS] } } } });
    if (where.length === 0) throw new AppError(WebhookErrors.SIGNATURE_INVALID);
    const filter = { provider: { in: [...GITHUB_PROVIDERS] }, encryptedWebhookSecret: { not: null }, OR: where } satisfies Prisma.IntegrationWhereInput;
    const affordable = Math.max(1, Math.floor(SHARED_URL_HMAC_BUDGET_BYTES / Math.max(rawBody.length, 1)));
    const candidates = await this.prisma.integration.findMany({
      where: filter,
      select: { id: true, organizationId: true, provider: true, encryptedWebhookSecret: true },
      orderBy: { createdAt: 'asc' },
      take: affordable + 1,
    });
    if (candidates.length > affordable) throw new AppError(WebhookErrors.INTEGRATION_URL_REQUIRED, { metadata: { candidatesOver: affordable } });
    let found: Target | undefined;
    for (const candidate of candidates) {
      const secret = this.credentials.webhookSecret(candidate);
      if (secret !== undefined && signatureMatches(rawBody, signature, secret) && !found)
        found = { id: candidate.id, organizationId: candidate.organizationId, provider: candidate.provider as Target['provider'] };
    }
    if (!found) throw new AppError(WebhookErrors.SIGNATURE_INVALID);
    return [found];
  }
}
