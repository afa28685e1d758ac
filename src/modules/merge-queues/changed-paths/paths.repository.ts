import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import { LACKS_PATHS_SQL, LIVE_STATUSES_SQL, QUEUES_WITH_PATH_GROUPS_SQL, WANTED_HEAD_SQL } from '../engine/store/entry-sql';
import { type ChangedPaths, keptPaths, lanesReasonText, type LanesVerdict, type PathGroup, pathGroupsOf } from '../planner';

/**
 * The changed-paths job's and sweep's statements, for queues of EVERY organization (the worker's:
 * none takes an organization id, none serves a request). Paths asked inside an event's transaction
 * are kept by QueueTransaction.setEntryPaths instead.
 */
@Injectable()
export class MergeQueuePathsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Live entries of the queue whose lanes were not matched for the head they are to be tested with
   * under the queue's groups, in arrival order, with that head, whether the row's paths were asked
   * for it (`current`) and how many the provider listed then (null: not known). Reads no path.
   */
  entriesWithoutLanes(queueId: string, atMost: number): Promise<{ id: string; head: string; current: boolean; pathsCount: number | null }[]> {
    return this.prisma.$queryRaw<{ id: string; head: string; current: boolean; pathsCount: number | null }[]>(Prisma.sql`
      SELECT "id", ${WANTED_HEAD_SQL} AS "head", "pathsHead" IS NOT DISTINCT FROM ${WANTED_HEAD_SQL} AS "current", "pathsCount"
        FROM "MergeQueueEntry"
       WHERE "queueId" = ${queueId} AND ${LACKS_PATHS_SQL}
       ORDER BY "position"
       LIMIT ${atMost}`);
  }

  /** The paths an entry row keeps (null: none kept), for the worker's matching only. */
  async keptPaths(entryId: string): Promise<string[] | null> {
    const row = await this.prisma.mergeQueueEntry.findUnique({ where: { id: entryId }, select: { changedPaths: true } });
    return Array.isArray(row?.changedPaths) ? (row.changedPaths as string[]) : null;
  }

  /**
   * Keeps paths asked and lanes matched outside the queue's lock, under it, when the queue still has
   * the `groups` they were matched under: for each entry still live, still to be tested with the head
   * they were asked for, and with no lanes matched for that head meanwhile (a request that moved the
   * head matched its own). Returns how many entries took them.
   */
  async keepAskedPaths(
    queueId: string,
    groups: readonly PathGroup[],
    asked: readonly { id: string; head: string; paths: ChangedPaths; verdict: LanesVerdict }[],
  ): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ settings: unknown }[]>`SELECT "settings" FROM "MergeQueue" WHERE "id" = ${queueId} FOR UPDATE`;
      // Groups changed meanwhile (or removed): the change scheduled its own job.
      if (!rows[0] || JSON.stringify(pathGroupsOf(rows[0])) !== JSON.stringify(groups) || groups.length === 0) return 0;
      let kept = 0;
      for (const entry of asked) {
        const list = keptPaths(entry.paths);
        const reason = entry.verdict.reason ? lanesReasonText(entry.verdict.reason) : null;
        kept += await tx.$executeRaw(Prisma.sql`
          UPDATE "MergeQueueEntry"
             SET "changedPaths" = ${list === null ? null : JSON.stringify(list)}::jsonb, "pathsCount" = ${entry.paths === null ? null : entry.paths.length}::int,
                 "pathsHead" = ${entry.head}, "lanes" = ${JSON.stringify(entry.verdict.lanes)}::jsonb, "lanesHead" = ${entry.head}, "lanesReason" = ${reason}
           WHERE "id" = ${entry.id} AND "queueId" = ${queueId} AND "status" IN (${LIVE_STATUSES_SQL})
             AND ${WANTED_HEAD_SQL} = ${entry.head} AND "lanesHead" IS DISTINCT FROM ${entry.head}`);
      }
      return kept;
    });
  }

  /**
   * Queues with path groups that hold a live entry with no paths kept for the head it is to be
   * tested with (the paths sweep): each queue with groups is looked at through its entries' index.
   */
  async queuesMissingPaths(): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>(Prisma.sql`
      SELECT g."id" FROM (${QUEUES_WITH_PATH_GROUPS_SQL}) g
       WHERE EXISTS (SELECT 1 FROM "MergeQueueEntry" WHERE "queueId" = g."id" AND ${LACKS_PATHS_SQL})
       ORDER BY g."id"`);
    return rows.map((r) => r.id);
  }
}
