import { type MergeQueueEntry as EntryRow, Prisma } from '@/generated/prisma/client';
import type { AuditRecord, AuditService } from '@/modules/audit/audit.service';
import { type ChangedPaths, laneMatcher, type MergeQueueEntryStatus, type PathGroup } from '../../planner';
import type { Lease } from '../lease';
import { LIVE_STATUSES_SQL, WANTED_HEAD_SQL } from './entry-sql';

/** An entry's stored status (also one the planner's history has dropped), or null when the queue has no such entry. */
export async function storedEntryStatus(
  client: Prisma.TransactionClient,
  organizationId: string,
  queueId: string,
  entryId: string,
): Promise<MergeQueueEntryStatus | null> {
  return (await client.mergeQueueEntry.findFirst({ where: { id: entryId, queueId, organizationId }, select: { status: true } }))?.status ?? null;
}

/** Who an audit record names: a caller, or the system. */
type AuditActor = Parameters<AuditService['record']>[1];

/**
 * What an event's callbacks may read and write inside its transaction (under the queue lock),
 * beside the planner state: every statement is here, none in the callers (MergeQueueWriter.apply
 * hands one to `build` and `after`).
 */
export class QueueTransaction {
  constructor(
    private readonly tx: Prisma.TransactionClient,
    private readonly auditService: AuditService,
    readonly queueId: string,
    readonly organizationId: string,
  ) {}

  /** The stored status of an entry of this queue (also one the planner's history has dropped), or null. */
  storedEntryStatus(entryId: string): Promise<MergeQueueEntryStatus | null> {
    return storedEntryStatus(this.tx, this.organizationId, this.queueId, entryId);
  }

  /**
   * What enqueueing PR `number` must know, in one statement: the live entry (not merged, removed or
   * failed) that already holds the PR, if any, and how many live entries the queue holds, counted up
   * to `atMost` (a cap's check need not count past it).
   */
  async liveEntries(number: number, atMost: number): Promise<{ duplicateId: string | null; live: number }> {
    const rows = await this.tx.$queryRaw<{ duplicateId: string | null; live: number }[]>(Prisma.sql`
      SELECT
        (SELECT "id" FROM "MergeQueueEntry"
          WHERE "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId} AND "number" = ${number}
            AND "status" IN (${LIVE_STATUSES_SQL}) LIMIT 1) AS "duplicateId",
        (SELECT count(*)::int FROM (SELECT 1 FROM "MergeQueueEntry"
          WHERE "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId}
            AND "status" IN (${LIVE_STATUSES_SQL}) LIMIT ${atMost}) AS capped) AS "live"`);
    return rows[0];
  }

  /** Row fields the planner does not hold: the settings as given, the queue's policy, the base ref and the one being moved to. */
  async setQueueFields(data: {
    settings?: Prisma.InputJsonObject;
    policy?: Prisma.InputJsonObject;
    baseRef?: string;
    pendingBaseRef?: string | null;
  }): Promise<void> {
    await this.tx.mergeQueue.update({ where: { id: this.queueId }, data });
  }

  /**
   * Keeps the paths a PR changes on its entry row (null: not known), the head they were asked for
   * (null: not asked), and the lanes they touch under the queue's path groups (planner/lanes.ts);
   * returns the row as it now is.
   */
  async setEntryPaths(entryId: string, head: string | null, paths: ChangedPaths, groups: readonly PathGroup[]): Promise<EntryRow> {
    return this.tx.mergeQueueEntry.update({
      where: { id: entryId, queueId: this.queueId, organizationId: this.organizationId },
      data: {
        changedPaths: paths === null ? Prisma.DbNull : [...paths],
        pathsHead: head,
        lanes: groups.length ? laneMatcher(groups)(paths) : Prisma.DbNull,
      },
    });
  }

  /**
   * The path groups changed: every live entry's lanes are worked out again from the paths its row
   * keeps, when they were asked for the head it is to be tested with (WANTED_HEAD_SQL); otherwise
   * it is in every lane until the worker asks them (MergeQueuePaths.fill). Without groups no entry
   * of the queue has lanes, final ones included. One statement per distinct set of lanes.
   */
  async relane(groups: readonly PathGroup[]): Promise<void> {
    if (groups.length === 0) {
      await this.tx.mergeQueueEntry.updateMany({ where: { queueId: this.queueId, organizationId: this.organizationId }, data: { lanes: Prisma.DbNull } });
      return;
    }
    const lanesOf = laneMatcher(groups);
    const bySet = new Map<string, string[]>();
    const rows = await this.tx.$queryRaw<{ id: string; changedPaths: unknown; current: boolean }[]>(Prisma.sql`
      SELECT "id", "changedPaths", "pathsHead" IS NOT DISTINCT FROM ${WANTED_HEAD_SQL} AS "current"
        FROM "MergeQueueEntry"
       WHERE "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId} AND "status" IN (${LIVE_STATUSES_SQL})`);
    for (const row of rows) {
      const key = JSON.stringify(lanesOf(row.current && Array.isArray(row.changedPaths) ? (row.changedPaths as string[]) : null));
      bySet.set(key, [...(bySet.get(key) ?? []), row.id]);
    }
    for (const [lanes, ids] of bySet) {
      await this.tx.mergeQueueEntry.updateMany({ where: { id: { in: ids }, queueId: this.queueId }, data: { lanes: JSON.parse(lanes) as string[] } });
    }
  }

  async setChecksUrl(batchId: string, url: string): Promise<void> {
    await this.tx.mergeQueueBatch.updateMany({ where: { id: batchId, queueId: this.queueId, organizationId: this.organizationId }, data: { checksUrl: url } });
  }

  /** The operation row is still pending and unfinished (nobody claimed it). */
  async operationClaimable(operationRowId: string): Promise<boolean> {
    const current = await this.tx.mergeQueueOperation.findFirst({
      where: { id: operationRowId, queueId: this.queueId },
      select: { outcome: true, finishedAt: true },
    });
    return current?.outcome === 'pending' && current.finishedAt === null;
  }

  /** Marks a pending operation `running`, owned by `lease`; false when another executor took it first. */
  async claimOperation(operationRowId: string, lease?: Lease): Promise<boolean> {
    const owner = lease ? { ownerHolder: lease.holder, ownerEpoch: lease.epoch } : {};
    return (
      (
        await this.tx.mergeQueueOperation.updateMany({
          where: { id: operationRowId, queueId: this.queueId, outcome: 'pending', finishedAt: null },
          data: { outcome: 'running', ...owner },
        })
      ).count === 1
    );
  }

  /** Finishes a pending operation the planner no longer waits for, without performing it. */
  async supersedeOperation(operationRowId: string): Promise<void> {
    await this.tx.mergeQueueOperation.updateMany({
      where: { id: operationRowId, queueId: this.queueId, outcome: 'pending', finishedAt: null },
      data: { finishedAt: new Date(), result: { superseded: true } },
    });
  }

  /** Records how an operation ended; one already finished (reconciled meanwhile) keeps its outcome. */
  async finishOperation(operationRowId: string, outcome: 'succeeded' | 'failed' | 'unknown', result: Prisma.InputJsonObject): Promise<void> {
    await this.tx.mergeQueueOperation.updateMany({
      where: { id: operationRowId, queueId: this.queueId, finishedAt: null },
      data: { outcome, finishedAt: new Date(), result },
    });
  }

  /** The executor completed an operation: its failures in a row are over (see engine/failure-policy.ts). */
  async resetFailures(): Promise<void> {
    await this.tx.mergeQueue.update({ where: { id: this.queueId }, data: { failureCount: 0, retryAt: null } });
  }

  /** An audit record in the event's transaction. */
  async audit(actor: AuditActor, record: Omit<AuditRecord, 'organizationId' | 'targetType' | 'targetId'>): Promise<void> {
    await this.auditService.record(this.tx, actor, { ...record, organizationId: this.organizationId, targetType: 'mergeQueue', targetId: this.queueId });
  }
}
