import { Prisma } from '@/generated/prisma/client';
import type { AuditRecord, AuditService } from '@/modules/audit/audit.service';
import { type ChangedPaths, keptPaths, lanesReasonText, type LanesVerdict, type MergeQueueEntryStatus, type PathGroup } from '../../planner';
import type { Lease } from '../lease';
import { LIVE_STATUSES_SQL, WANTED_HEAD_SQL } from './entry-sql';
import { ENTRY_VIEW_OMIT, type EntryView } from './queue-view';

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

  /** Where the entry's title came from (`request`: the caller; `github`: the PR as GitHub has it). */
  async setTitleSource(entryId: string, source: 'request' | 'github'): Promise<void> {
    await this.tx.mergeQueueEntry.updateMany({
      where: { id: entryId, queueId: this.queueId, organizationId: this.organizationId },
      data: { titleSource: source },
    });
  }

  /** How an entry came and who asked (`MergeQueueEntry.origin`), written with the event that made it. */
  async setEntryOrigin(entryId: string, origin: { via: string; actor: string; actorKind: string }): Promise<void> {
    await this.tx.mergeQueueEntry.updateMany({ where: { id: entryId, queueId: this.queueId, organizationId: this.organizationId }, data: { origin } });
  }

  /** Row fields the planner does not hold: the settings as given, the queue's policy, the base ref and the one being moved to. */
  async setQueueFields(data: {
    settings?: Prisma.InputJsonObject;
    policy?: Prisma.InputJsonObject;
    requiredChecksRead?: Prisma.InputJsonObject;
    baseRef?: string;
    pendingBaseRef?: string | null;
  }): Promise<void> {
    await this.tx.mergeQueue.update({ where: { id: this.queueId }, data });
  }

  /**
   * Keeps what is known of the paths a PR changes on its entry row: the head they were asked for
   * (null: not asked), how many (null: not known), the list itself only within KEPT_PATHS_LIMITS,
   * and the lanes matched outside the lock (`verdict`, for `head` under `groups`) with the reason
   * when they are every lane. A null verdict (not matched for these groups) is every lane until the
   * worker matches them. Returns the row as it now is, without its paths.
   */
  async setEntryPaths(
    entryId: string,
    head: string | null,
    paths: ChangedPaths,
    groups: readonly PathGroup[],
    verdict: LanesVerdict | null,
  ): Promise<EntryView> {
    const kept = keptPaths(paths);
    return this.tx.mergeQueueEntry.update({
      where: { id: entryId, queueId: this.queueId, organizationId: this.organizationId },
      data: {
        changedPaths: kept === null ? Prisma.DbNull : [...kept],
        pathsCount: paths === null ? null : paths.length,
        pathsHead: head,
        lanes: groups.length ? (verdict?.lanes ?? groups.map((g) => g.name)) : Prisma.DbNull,
        lanesHead: groups.length && verdict ? head : null,
        lanesReason: groups.length && verdict?.reason ? lanesReasonText(verdict.reason) : null,
      },
      omit: ENTRY_VIEW_OMIT,
    });
  }

  /**
   * Keeps paths asked and lanes matched outside the queue's lock by the worker (MergeQueuePaths.fill,
   * under the groups the caller checked the queue still has): for each entry still live, still to be
   * tested with the head they were asked for, and with no lanes matched for that head meanwhile (a
   * request that moved the head matched its own). Returns how many entries took them.
   */
  async keepAskedPaths(asked: readonly { id: string; head: string; paths: ChangedPaths; verdict: LanesVerdict }[]): Promise<number> {
    let kept = 0;
    for (const entry of asked) {
      const list = keptPaths(entry.paths);
      const reason = entry.verdict.reason ? lanesReasonText(entry.verdict.reason) : null;
      kept += await this.tx.$executeRaw(Prisma.sql`
        UPDATE "MergeQueueEntry"
           SET "changedPaths" = ${list === null ? null : JSON.stringify(list)}::jsonb, "pathsCount" = ${entry.paths === null ? null : entry.paths.length}::int,
               "pathsHead" = ${entry.head}, "lanes" = ${JSON.stringify(entry.verdict.lanes)}::jsonb, "lanesHead" = ${entry.head}, "lanesReason" = ${reason}
         WHERE "id" = ${entry.id} AND "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId} AND "status" IN (${LIVE_STATUSES_SQL})
           AND ${WANTED_HEAD_SQL} = ${entry.head} AND "lanesHead" IS DISTINCT FROM ${entry.head}`);
    }
    return kept;
  }

  /**
   * The path groups changed: every live entry is in every lane until the worker matches its kept
   * paths again outside the lock (MergeQueuePaths.fill; asks the provider for those it kept none
   * of). Nothing is matched here. Without groups no entry of the queue has lanes, final ones included.
   */
  async relane(groups: readonly PathGroup[]): Promise<void> {
    const where = { queueId: this.queueId, organizationId: this.organizationId };
    if (groups.length === 0) {
      await this.tx.mergeQueueEntry.updateMany({ where, data: { lanes: Prisma.DbNull, lanesHead: null, lanesReason: null } });
      return;
    }
    await this.tx.$executeRaw(Prisma.sql`
      UPDATE "MergeQueueEntry" SET "lanes" = ${JSON.stringify(groups.map((g) => g.name))}::jsonb, "lanesHead" = NULL, "lanesReason" = NULL
       WHERE "queueId" = ${this.queueId} AND "organizationId" = ${this.organizationId} AND "status" IN (${LIVE_STATUSES_SQL})`);
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
