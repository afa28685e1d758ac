import { Injectable } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { batchRowId } from '../engine/ids';
import { MergeQueueErrors } from '../merge-queues.errors';
import { MergeQueuesRepository } from '../merge-queues.repository';
import { MergeQueuesService } from '../merge-queues.service';
import { type PageBatch, type PageEntry, renderQueuePage } from './queue-page';
import { MergeQueueViewLinks } from './view-links.service';

/**
 * The queue's page behind a view link: the queue as its organization's members see it through the
 * API (the chain, entries, recent batches), read with the organization the link belongs to, and
 * rendered as HTML. A link that does not open gives nothing.
 */
@Injectable()
export class QueuePageService {
  constructor(
    private readonly links: MergeQueueViewLinks,
    private readonly queues: MergeQueuesService,
    private readonly repository: MergeQueuesRepository,
  ) {}

  /** The page, or null for every link that does not open (each the same null). */
  async render(queueId: string, token: string, pr: number | undefined): Promise<string | null> {
    const opened = await this.links.open(queueId, token);
    if (!opened) return null;
    const { organizationId } = opened;
    let read;
    try {
      read = await Promise.all([
        this.queues.chainOf(organizationId, queueId),
        this.repository.findView(organizationId, queueId),
        this.repository.plannerState(organizationId, queueId),
      ]);
    } catch (error) {
      // The queue was deleted since the link was checked: the same page as any link that does not open.
      if (error instanceof AppError && error.entry === MergeQueueErrors.NOT_FOUND) return null;
      throw error;
    }
    const [picture, view, state] = read;
    const reasons = new Map((state?.batches ?? []).filter((b) => b.failureReason).map((b) => [batchRowId(queueId, b.id), b.failureReason as string]));
    const entries: PageEntry[] = view.entries.map((x) => ({
      number: x.number,
      url: x.url,
      status: x.status,
      updatedAt: x.updatedAt.toISOString(),
      ...(x.title !== null && { title: x.title }),
      ...(x.block !== null && { block: x.block }),
      ...(x.batchId !== null && { batchId: x.batchId }),
    }));
    const batches: PageBatch[] = view.batches.map((b) => ({
      id: b.id,
      status: b.status,
      prNumbers: b.prNumbers,
      updatedAt: b.updatedAt.toISOString(),
      ...(b.checksUrl !== null && { checksUrl: b.checksUrl }),
      ...(reasons.has(b.id) && { failureReason: reasons.get(b.id) }),
    }));
    return renderQueuePage({ picture, entries, batches, ...(pr !== undefined && { pr }) });
  }
}
