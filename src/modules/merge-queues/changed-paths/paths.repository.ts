import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import { LACKS_PATHS_SQL, QUEUES_WITH_PATH_GROUPS_SQL, WANTED_HEAD_SQL } from '../engine/store/entry-sql';

/**
 * The changed-paths job's and sweep's reads, for queues of EVERY organization (the worker's: none
 * takes an organization id, none serves a request). What is asked is kept under the queue's lock,
 * through the writer, by QueueTransaction.setEntryPaths and keepAskedPaths, with the planner's
 * `entryLanes`.
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
