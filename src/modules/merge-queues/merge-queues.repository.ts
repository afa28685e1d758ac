import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { fromModel, newestFirst, type Page, paginate, type PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { CodeSource, MergeQueue, MergeQueueBatch as BatchRow, MergeQueueEvent as EventRow, Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { documentOf, LIVE_ENTRY_STATUSES } from './engine/store/queue-state-codec';
import { assembleState } from './engine/store/queue-state-loaders';
import { QueueTransaction, storedEntryStatus } from './engine/store/queue-transaction';
import { ENTRY_VIEW_OMIT, type EntryView, type QueueView, type QueueWithSource, readQueueView, renderQueue } from './engine/store/queue-view';
import { ROW_ID } from '@/common/http/row-id';
import { GIT_SHA } from './dto/merge-queue.dto';
import { MergeQueueErrors } from './merge-queues.errors';
import { type BatchState, type EntryState, FINAL_BATCH_STATUSES, type MergeQueueEntryStatus, type MergeQueueState } from './planner';

/** A batch row with what the planner holds of it (see MergeQueuesRepository.batchDetails). */
export interface BatchDetailsRead {
  row: BatchRow;
  batch: BatchState | null;
  chain: BatchState[];
  entries: EntryState[];
}

/** The lists' keysets: queues and event trails, newest first. */
export const QUEUES_ORDER = newestFirst<MergeQueue>('mergeQueues');
export const EVENTS_ORDER = newestFirst<EventRow>('mergeQueueEvents');

/**
 * What a provider event concerns, so only those queues are locked: the queue of a base branch, the
 * queue whose live batch has a candidate commit, the queues a PR is live in.
 */
export type QueueConcern = { baseRef: string } | { candidateSha: string } | { liveNumber: number };

function concernWhere(concern: QueueConcern): Prisma.MergeQueueWhereInput {
  if ('baseRef' in concern) return { baseRef: concern.baseRef };
  if ('candidateSha' in concern) return { batches: { some: { headSha: concern.candidateSha, status: { notIn: [...FINAL_BATCH_STATUSES] } } } };
  return { entries: { some: { number: concern.liveNumber, status: { in: [...LIVE_ENTRY_STATUSES] } } } };
}

/**
 * The merge queues' organization-scoped reads, and the create: every method takes the organization
 * id and reads or writes only that organization's rows. A queue's state changes only through
 * MergeQueueWriter.apply; the worker's reads of every organization are MergeQueueOutboxRepository's.
 */
@Injectable()
export class MergeQueuesRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Creates a queue with its first planner state, audited, and returns it as the API renders it;
   * a 422 naming the limit when the organization already has `limit` queues.
   */
  async create(
    actor: Principal,
    data: {
      organizationId: string;
      repositoryId: string;
      baseRef: string;
      state: MergeQueueState;
      policy: Record<string, unknown>;
      requiredChecksRead?: Record<string, unknown>;
    },
    limit: number,
  ): Promise<QueueView> {
    const { organizationId, repositoryId, baseRef, state, policy, requiredChecksRead } = data;
    return this.prisma.$transaction(async (tx) => {
      // The organization's row serializes creations, so two at once cannot both take the last place.
      await tx.$queryRaw`SELECT id FROM "Organization" WHERE id = ${organizationId} FOR UPDATE`;
      if ((await tx.mergeQueue.count({ where: { organizationId } })) >= limit) {
        throw new AppError(MergeQueueErrors.QUEUE_LIMIT_REACHED, {
          message: `The organization already has ${limit} merge queues, the most this server allows (MERGE_QUEUE_MAX_PER_ORGANIZATION).`,
          metadata: { limit },
        });
      }
      const queue = await tx.mergeQueue.create({
        data: {
          organizationId,
          repositoryId,
          baseRef,
          revision: BigInt(state.revision),
          status: state.status,
          batchDepth: state.batchDepth,
          settings: state.config as unknown as Prisma.InputJsonObject,
          plannerState: documentOf(state),
          policy: policy as Prisma.InputJsonObject,
          ...(requiredChecksRead !== undefined && { requiredChecksRead: requiredChecksRead as Prisma.InputJsonObject }),
        },
      });
      await new QueueTransaction(tx, this.audit, queue.id, organizationId).audit(actor, {
        action: AuditAction.MergeQueueCreated,
        metadata: { repositoryId, baseRef },
      });
      return renderQueue(tx, { ...queue, repository: await tx.codeSource.findUniqueOrThrow({ where: { id: repositoryId } }) });
    });
  }

  /** The organization's code source, or null. */
  codeSource(organizationId: string, id: string): Promise<CodeSource | null> {
    return this.prisma.codeSource.findFirst({ where: { id, organizationId } });
  }

  /**
   * The organization's queues of a repository connected through `integrationId` (provider webhooks):
   * the first `maxConcerned` the event concerns (to be locked), then the others (noted, not locked).
   */
  async queuesOfRepository(
    organizationId: string,
    integrationId: string,
    repositoryId: string,
    concern: QueueConcern,
    maxConcerned: number,
  ): Promise<{ id: string; baseRef: string; settings: unknown; policy: unknown; concerned: boolean }[]> {
    // By the provider's id of the repository (a code source's foreignId), which a rename keeps.
    const where: Prisma.MergeQueueWhereInput = { organizationId, repository: { integrationId, foreignId: repositoryId } };
    const select = { id: true, baseRef: true, settings: true, policy: true, createdAt: true } as const;
    const concerned = await this.prisma.mergeQueue.findMany({
      where: { ...where, ...concernWhere(concern) },
      select,
      orderBy: { createdAt: 'asc' },
      take: maxConcerned,
    });
    const others = await this.prisma.mergeQueue.findMany({
      where: { ...where, id: { notIn: concerned.map((q) => q.id) } },
      select,
      orderBy: { createdAt: 'asc' },
      take: 100,
    });
    return [...concerned.map((q) => ({ ...q, concerned: true })), ...others.map((q) => ({ ...q, concerned: false }))]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map(({ createdAt: _createdAt, ...q }) => q);
  }

  /**
   * The organization's queues whose required checks come from branch protection, of one repository
   * connected through `integrationId` (GitHub's id of it), or of every repository of the integration
   * when none is named (an organization ruleset), oldest first.
   */
  async branchProtectionQueues(organizationId: string, integrationId: string, repositoryId: string | undefined, atMost: number): Promise<string[]> {
    const rows = await this.prisma.mergeQueue.findMany({
      where: {
        organizationId,
        repository: { integrationId, ...(repositoryId !== undefined && { foreignId: repositoryId }) },
        policy: { path: ['requiredChecksFrom'], equals: 'branchProtection' },
      },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
      take: atMost,
    });
    return rows.map((r) => r.id);
  }

  /** Another queue of the repository that has `baseRef` as its base ref or is moving to it (`except`: the queue asking). */
  async baseRefTaken(
    organizationId: string,
    repositoryId: string,
    baseRef: string,
    options: { except?: string; pendingOnly?: boolean } = {},
  ): Promise<boolean> {
    const ref = options.pendingOnly ? { pendingBaseRef: baseRef } : { OR: [{ baseRef }, { pendingBaseRef: baseRef }] };
    const taken = await this.prisma.mergeQueue.findFirst({
      where: { organizationId, repositoryId, ...(options.except !== undefined && { id: { not: options.except } }), ...ref },
      select: { id: true },
    });
    return taken !== null;
  }

  /** The organization's queue with its code source, or a 404. */
  async find(organizationId: string, id: string): Promise<QueueWithSource> {
    const row = await this.prisma.mergeQueue.findFirst({ where: { id, organizationId }, include: { repository: true } });
    if (!row) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }
  /** The PR has a live entry in the organization's queue (a provider event asks before calling the provider for it). */
  async hasLiveEntry(organizationId: string, queueId: string, number: number): Promise<boolean> {
    return (await this.prisma.mergeQueueEntry.count({ where: { organizationId, queueId, number, status: { in: [...LIVE_ENTRY_STATUSES] } } })) > 0;
  }

  /** An entry's stored status in the organization's queue, or null when there is none. */
  entryStatus(organizationId: string, queueId: string, entryId: string): Promise<MergeQueueEntryStatus | null> {
    return storedEntryStatus(this.prisma, organizationId, queueId, entryId);
  }

  /** These entries of the queue as the chain shows them (number, title and lanes), by entry id. */
  async chainEntries(organizationId: string, queueId: string, entryIds: readonly string[]): Promise<Map<string, EntryView>> {
    if (entryIds.length === 0) return new Map();
    const rows = await this.prisma.mergeQueueEntry.findMany({ where: { organizationId, queueId, id: { in: [...entryIds] } }, omit: ENTRY_VIEW_OMIT });
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * An entry of the organization's queue with the batch it is in and the newest `events` of the
   * queue that concern it (naming it, or moving its status), read in one snapshot; a 404 for a queue
   * or an entry the organization does not have.
   */
  async entryDetails(
    organizationId: string,
    queueId: string,
    entryId: string,
    events: number,
  ): Promise<{ entry: EntryView; batch: BatchRow | null; events: EventRow[] }> {
    return this.prisma.$transaction(
      async (tx) => {
        const queue = await tx.mergeQueue.findFirst({ where: { id: queueId, organizationId }, select: { id: true } });
        if (!queue) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id: queueId } });
        const entry = ROW_ID.test(entryId)
          ? await tx.mergeQueueEntry.findFirst({ where: { id: entryId, queueId, organizationId }, omit: ENTRY_VIEW_OMIT })
          : null;
        if (!entry) throw new AppError(MergeQueueErrors.ENTRY_NOT_FOUND, { metadata: { id: entryId } });
        const batch = entry.batchId === null ? null : await tx.mergeQueueBatch.findFirst({ where: { id: entry.batchId, queueId, organizationId } });
        // The trail from the entry's arrival on (the index's range), the events that name it or step it.
        const trail = await tx.mergeQueueEvent.findMany({
          where: {
            queueId,
            organizationId,
            createdAt: { gte: new Date(entry.createdAt.getTime() - 60_000) },
            OR: [{ detail: { path: ['entryId'], equals: entryId } }, { transitions: { array_contains: [{ subject: 'entry', id: entryId }] } }],
          },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: events,
        });
        return { entry, batch, events: trail };
      },
      { isolationLevel: 'RepeatableRead' },
    );
  }

  /**
   * One batch of the organization's queue with what the planner holds of it (null once its history
   * dropped it), the batches it is built on and the entries its candidate holds: a 404 for a queue
   * or batch that is not there. `by` is the batch's id, or its candidate commit (the newest batch
   * with that candidate; a 404 naming the commit when none has it).
   */
  async batchDetails(organizationId: string, queueId: string, by: { batchId: string } | { candidateSha: string }): Promise<BatchDetailsRead> {
    return this.prisma.$transaction(
      async (tx) => {
        const queue = await tx.mergeQueue.findFirst({ where: { id: queueId, organizationId }, select: { id: true } });
        if (!queue) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id: queueId } });
        let row: BatchRow | null;
        if ('batchId' in by) {
          row = ROW_ID.test(by.batchId) ? await tx.mergeQueueBatch.findFirst({ where: { id: by.batchId, queueId, organizationId } }) : null;
          if (!row) throw new AppError(MergeQueueErrors.BATCH_NOT_FOUND, { metadata: { id: by.batchId } });
        } else {
          row = GIT_SHA.test(by.candidateSha)
            ? await tx.mergeQueueBatch.findFirst({
                where: { queueId, organizationId, headSha: by.candidateSha },
                orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
              })
            : null;
          if (!row) throw new AppError(MergeQueueErrors.CANDIDATE_NOT_FOUND, { metadata: { sha: by.candidateSha } });
        }
        const batch = row.planner as unknown as BatchState | null;
        if (!batch) return { row, batch: null, chain: [], entries: [] };
        // The batches it is built on, nearest first (a chain is at most the queue's depth long).
        const chain: BatchState[] = [];
        const seen = new Set([batch.id]);
        for (let parent = batch.parentId; parent !== null && !seen.has(parent);) {
          seen.add(parent);
          const up = await tx.mergeQueueBatch.findFirst({ where: { queueId, organizationId, plannerKey: parent }, select: { planner: true } });
          const state = up?.planner as unknown as BatchState | null | undefined;
          if (!state) break;
          chain.push(state);
          parent = state.parentId;
        }
        const ids = [...new Set([...batch.ciContentIds, ...batch.entryIds, ...chain.flatMap((b) => b.entryIds)])];
        const entries = await tx.mergeQueueEntry.findMany({ where: { queueId, organizationId, id: { in: ids } }, select: { planner: true } });
        return { row, batch, chain, entries: entries.flatMap((e) => (e.planner ? [e.planner as unknown as EntryState] : [])) };
      },
      { isolationLevel: 'RepeatableRead' },
    );
  }

  /** The organization's queue as the API renders it, or a 404. */
  async findView(organizationId: string, id: string): Promise<QueueView> {
    // One snapshot: the queue, its entries and its batches are read at once, so a land committed
    // between two of the reads never shows an entry `merged` beside its batch still `merging`.
    const view = await this.prisma.$transaction((tx) => readQueueView(tx, organizationId, id), { isolationLevel: 'RepeatableRead' });
    if (!view) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id } });
    return view;
  }

  /** A page of the organization's queues, newest first, each as the API renders it (the page's queues in one query). */
  async list(organizationId: string, query: PaginationQueryDto): Promise<Page<QueueView>> {
    const page = await paginate(fromModel(this.prisma.mergeQueue, { organizationId }), QUEUES_ORDER, query, (row) => row.id);
    const rows = new Map(
      (await this.prisma.mergeQueue.findMany({ where: { id: { in: page.data }, organizationId }, include: { repository: true } })).map((row) => [row.id, row]),
    );
    const data = await Promise.all(page.data.flatMap((id) => (rows.has(id) ? [renderQueue(this.prisma, rows.get(id)!)] : [])));
    return { ...page, data };
  }

  /** Batch rows of the organization's queue by id. */
  batches(organizationId: string, queueId: string, ids: readonly string[]): Promise<BatchRow[]> {
    return this.prisma.mergeQueueBatch.findMany({ where: { organizationId, queueId, id: { in: [...ids] } } });
  }

  /** A page of the queue's event trail, newest first. */
  events<R>(organizationId: string, queueId: string, query: PaginationQueryDto, map: (row: EventRow) => R): Promise<Page<R>> {
    return paginate(fromModel(this.prisma.mergeQueueEvent, { organizationId, queueId }), EVENTS_ORDER, query, map);
  }
  /** The queue's planner state as the last event left it (one snapshot), or null when there is no such queue. */
  async plannerState(organizationId: string, queueId: string): Promise<MergeQueueState | null> {
    return this.prisma.$transaction(
      async (tx) => {
        const row = await tx.mergeQueue.findFirst({ where: { id: queueId, organizationId } });
        return row ? assembleState(tx, row) : null;
      },
      { isolationLevel: 'RepeatableRead' },
    );
  }
}
