import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueueOperation as OperationRow } from '@/generated/prisma/client';
import type { LandedPr } from '@/modules/git-providers/merge-queue-git';
import type { MergeQueueOperationKind } from '../../planner';
import type { Lease } from '../lease';
import type { QueueWithSource } from './queue-view';

/**
 * The worker's statements outside an event's transaction, for queues of EVERY organization (the
 * worker works for all of them; none of these takes an organization id, and none serves a
 * request): the executor's lease, the outbox of operations it drains, its failures in a row and
 * backoff, and what the sweep restarts. The one writer of a queue's state is MergeQueueWriter; the
 * API's organization-scoped reads are MergeQueuesRepository's.
 */
@Injectable()
export class MergeQueueOutboxRepository {
  constructor(private readonly prisma: PrismaService) {}

  // ---------------------------------------------------------------- the executor's lease

  /**
   * Takes the queue's lease for `holder` when it is free or expired (the database's clock decides),
   * growing the epoch; null when another executor holds it. Waits for a write under the queue lock
   * to finish, so no write of the previous holder can commit after the take.
   */
  async takeLease(queueId: string, holder: string, leaseMs: number): Promise<Lease | null> {
    const rows = await this.prisma.$queryRaw<{ leaseEpoch: bigint }[]>`
      UPDATE "MergeQueue" SET "leaseHolder" = ${holder}, "leaseEpoch" = "leaseEpoch" + 1,
        "leaseExpiresAt" = (now() AT TIME ZONE 'UTC') + ${leaseMs} * interval '1 millisecond'
      WHERE "id" = ${queueId} AND ("leaseHolder" IS NULL OR "leaseExpiresAt" IS NULL OR "leaseExpiresAt" <= (now() AT TIME ZONE 'UTC'))
      RETURNING "leaseEpoch"`;
    return rows.length === 1 ? { queueId, holder, epoch: BigInt(rows[0].leaseEpoch) } : null;
  }

  /** Extends the lease by `leaseMs` from now; false when it is no longer this holder's (taken over). */
  async renewLease(lease: Lease, leaseMs: number): Promise<boolean> {
    const count = await this.prisma.$executeRaw`
      UPDATE "MergeQueue" SET "leaseExpiresAt" = (now() AT TIME ZONE 'UTC') + ${leaseMs} * interval '1 millisecond'
      WHERE "id" = ${lease.queueId} AND "leaseHolder" = ${lease.holder} AND "leaseEpoch" = ${lease.epoch}`;
    return count === 1;
  }

  /** Gives the lease back (the epoch stays: the next take grows it); nothing when it is not held any more. */
  async releaseLease(lease: Lease): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE "MergeQueue" SET "leaseHolder" = NULL, "leaseExpiresAt" = NULL
      WHERE "id" = ${lease.queueId} AND "leaseHolder" = ${lease.holder} AND "leaseEpoch" = ${lease.epoch}`;
  }

  /** When the queue's lease (held by someone) expires, in milliseconds from now by the database's clock; null when free. */
  async leaseRemainingMs(queueId: string): Promise<number | null> {
    const rows = await this.prisma.$queryRaw<{ ms: number | null }[]>`
      SELECT CASE WHEN "leaseHolder" IS NULL THEN NULL ELSE GREATEST(0, EXTRACT(EPOCH FROM ("leaseExpiresAt" - (now() AT TIME ZONE 'UTC'))) * 1000)::float8 END AS ms
      FROM "MergeQueue" WHERE "id" = ${queueId}`;
    return rows[0]?.ms ?? null;
  }

  // ---------------------------------------------------------------- the outbox, failures and the sweep

  /** A queue with its code source, for its executor (any organization: the worker works for all). */
  queueForWorker(queueId: string): Promise<QueueWithSource | null> {
    return this.prisma.mergeQueue.findUnique({ where: { id: queueId }, include: { repository: true } });
  }

  /** Pending operations in the order the planner issued them, `kinds` in or out, leaving `exclude` out. */
  pendingOperations(
    queueId: string,
    filter: { kinds: readonly MergeQueueOperationKind[]; not?: boolean },
    exclude: readonly string[],
    take: number,
  ): Promise<OperationRow[]> {
    const kind = filter.not ? { notIn: [...filter.kinds] } : { in: [...filter.kinds] };
    return this.prisma.mergeQueueOperation.findMany({
      where: { queueId, finishedAt: null, outcome: 'pending', id: { notIn: [...exclude] }, kind },
      orderBy: [{ revision: 'asc' }, { ordinal: 'asc' }],
      take,
    });
  }

  /**
   * Puts an operation the executor claimed back to `pending` without an outcome: the provider
   * could not perform it now, or refused it (it did not happen; a land that may have happened is
   * safe to repeat, see MergeQueueExecutor.perform). It is performed again after the backoff, or
   * when the queue is resumed. The planner still holds it as started, which changes nothing.
   */
  async releaseOperation(queueId: string, operationRowId: string, lease: Lease): Promise<void> {
    // Only the claim of this lease: one a newer executor reconciled meanwhile is its own.
    await this.prisma.mergeQueueOperation.updateMany({
      where: { id: operationRowId, queueId, outcome: 'running', finishedAt: null, ownerHolder: lease.holder, ownerEpoch: lease.epoch },
      data: { outcome: 'pending' },
    });
  }

  /**
   * Operations marked `running` and not finished by an earlier lease than `lease` (whose holder
   * therefore lost it: it expired or was given back), in the order the planner issued them.
   */
  orphanedOperations(lease: Lease): Promise<OperationRow[]> {
    return this.prisma.mergeQueueOperation.findMany({
      where: { queueId: lease.queueId, finishedAt: null, outcome: 'running', OR: [{ ownerEpoch: null }, { ownerEpoch: { lt: lease.epoch } }] },
      orderBy: [{ revision: 'asc' }, { ordinal: 'asc' }],
    });
  }

  /**
   * What an executor run would find, in one statement and without the lease: the kinds of the
   * queue's unfinished operations and whether it is moving to a new base ref; null when the queue
   * is gone or quarantined (nothing to do until it is resumed).
   */
  async executorWork(queueId: string): Promise<{ kinds: MergeQueueOperationKind[]; moving: boolean } | null> {
    const rows = await this.prisma.$queryRaw<{ moving: boolean; kinds: MergeQueueOperationKind[] }[]>`
      SELECT q."pendingBaseRef" IS NOT NULL AS "moving",
        ARRAY(SELECT DISTINCT o."kind"::text FROM "MergeQueueOperation" o WHERE o."queueId" = q."id" AND o."finishedAt" IS NULL) AS "kinds"
      FROM "MergeQueue" q WHERE q."id" = ${queueId} AND NOT q."quarantined"`;
    return rows.length === 1 ? rows[0] : null;
  }

  /** The queue has unfinished operations, or is moving to a new base ref (a quarantined queue has no work until resumed). */
  async unfinishedWork(queueId: string): Promise<{ operations: number; moving: boolean }> {
    const queue = await this.prisma.mergeQueue.findUnique({ where: { id: queueId }, select: { pendingBaseRef: true, quarantined: true } });
    if (!queue || queue.quarantined) return { operations: 0, moving: false };
    const operations = await this.prisma.mergeQueueOperation.count({ where: { queueId, finishedAt: null } });
    return { operations, moving: queue.pendingBaseRef !== null };
  }

  /** How long the queue's executor still waits after its last failure (0: it may run). */
  async retryWaitMs(queueId: string, now = Date.now()): Promise<number> {
    const queue = await this.prisma.mergeQueue.findUnique({ where: { id: queueId }, select: { retryAt: true } });
    return queue?.retryAt ? Math.max(0, queue.retryAt.getTime() - now) : 0;
  }

  /** Counts one more executor failure in a row; returns the count. */
  async recordFailure(queueId: string): Promise<number> {
    const rows = await this.prisma.$queryRaw<
      { failureCount: number }[]
    >`UPDATE "MergeQueue" SET "failureCount" = "failureCount" + 1 WHERE "id" = ${queueId} RETURNING "failureCount"`;
    return rows[0]?.failureCount ?? 0;
  }

  /** The executor does not run before `at` (its backoff). */
  async setRetryAt(queueId: string, at: Date): Promise<void> {
    await this.prisma.mergeQueue.updateMany({ where: { id: queueId }, data: { retryAt: at } });
  }

  /**
   * What the sweep restarts: queues with unfinished operations, queues moving base ref (neither
   * quarantined), and queues with something due by now (`nextWakeAt`: a check deadline or a heavy-
   * run threshold of running CI); each list by queue id. Every query
   * goes through a partial index, so idle queues cost nothing.
   */
  async sweepTargets(): Promise<{ unfinished: string[]; moving: string[]; due: string[] }> {
    const unfinished = await this.prisma.$queryRaw<{ queueId: string }[]>`
      SELECT DISTINCT o."queueId" FROM "MergeQueueOperation" o JOIN "MergeQueue" q ON q."id" = o."queueId"
      WHERE o."finishedAt" IS NULL AND NOT q."quarantined" ORDER BY o."queueId"`;
    const moving = await this.prisma.mergeQueue.findMany({
      where: { pendingBaseRef: { not: null }, quarantined: false },
      orderBy: { id: 'asc' },
      select: { id: true },
    });
    const due = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "MergeQueue" WHERE "nextWakeAt" IS NOT NULL AND "nextWakeAt" <= (now() AT TIME ZONE 'UTC') ORDER BY "id"`;
    return { unfinished: unfinished.map((r) => r.queueId), moving: moving.map((r) => r.id), due: due.map((r) => r.id) };
  }

  // ---------------------------------------------------------------- land methods

  /** The titles of the queue's entries `ids` (a squash commit's message), by entry id; a title never set is null. */
  async entryTitles(queueId: string, ids: readonly string[]): Promise<Map<string, string | null>> {
    const rows = await this.prisma.mergeQueueEntry.findMany({ where: { queueId, id: { in: [...ids] } }, select: { id: true, title: true } });
    return new Map(rows.map((r) => [r.id, r.title]));
  }

  /**
   * The commits each PR of a batch added to its candidate `candidateSha`, as the `prepare` that
   * built it recorded them (the executor stores them in the operation's result); null when no
   * finished prepare of the batch built that candidate.
   */
  async landedCommits(queueId: string, batchRowId: string, candidateSha: string): Promise<{ method: string; landed: LandedPr[] } | null> {
    const rows = await this.prisma.mergeQueueOperation.findMany({
      where: { queueId, batchId: batchRowId, kind: 'prepare', outcome: 'succeeded' },
      orderBy: { createdAt: 'desc' },
      select: { result: true },
    });
    for (const { result } of rows) {
      const r = result as { candidateSha?: unknown; method?: unknown; landed?: unknown } | null;
      if (r?.candidateSha === candidateSha && Array.isArray(r.landed) && typeof r.method === 'string')
        return { method: r.method, landed: r.landed as LandedPr[] };
    }
    return null;
  }
}
