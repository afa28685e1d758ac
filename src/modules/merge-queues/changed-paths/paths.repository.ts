import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import { Prisma } from '@/generated/prisma/client';
import { LACKS_PATHS_SQL, LIVE_STATUSES_SQL, QUEUES_WITH_PATH_GROUPS_SQL, WANTED_HEAD_SQL } from '../engine/store/entry-sql';
import { type ChangedPaths, laneMatcher, pathGroupsOf } from '../planner';

/**
 * The changed-paths job's and sweep's statements, for queues of EVERY organization (the worker's:
 * none takes an organization id, none serves a request). Paths asked inside an event's transaction
 * are kept by QueueTransaction.setEntryPaths instead.
 */
@Injectable()
export class MergeQueuePathsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Live entries of the queue whose kept paths are not those of the head they are to be tested with, in arrival order, with that head. */
  entriesWithoutPaths(queueId: string, atMost: number): Promise<{ id: string; head: string }[]> {
    return this.prisma.$queryRaw<{ id: string; head: string }[]>(Prisma.sql`
      SELECT "id", ${WANTED_HEAD_SQL} AS "head"
        FROM "MergeQueueEntry"
       WHERE "queueId" = ${queueId} AND ${LACKS_PATHS_SQL}
       ORDER BY "position"
       LIMIT ${atMost}`);
  }

  /**
   * Keeps paths asked outside the queue's lock, under it: for each entry still live, still to be
   * tested with the head they were asked for, and with no paths kept for that head meanwhile (a
   * request that moved the head asked its own), with the lanes of the groups the queue has now.
   * Returns how many entries took them.
   */
  async keepAskedPaths(queueId: string, asked: readonly { id: string; head: string; paths: ChangedPaths }[]): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ settings: unknown }[]>`SELECT "settings" FROM "MergeQueue" WHERE "id" = ${queueId} FOR UPDATE`;
      const groups = rows[0] ? pathGroupsOf(rows[0]) : [];
      if (groups.length === 0) return 0;
      const lanesOf = laneMatcher(groups);
      let kept = 0;
      for (const entry of asked) {
        const paths = entry.paths === null ? null : JSON.stringify(entry.paths);
        kept += await tx.$executeRaw(Prisma.sql`
          UPDATE "MergeQueueEntry"
             SET "changedPaths" = ${paths}::jsonb, "pathsHead" = ${entry.head}, "lanes" = ${JSON.stringify(lanesOf(entry.paths))}::jsonb
           WHERE "id" = ${entry.id} AND "queueId" = ${queueId} AND "status" IN (${LIVE_STATUSES_SQL})
             AND ${WANTED_HEAD_SQL} = ${entry.head} AND "pathsHead" IS DISTINCT FROM ${entry.head}`);
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
