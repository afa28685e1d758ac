import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { failpoint } from '@/common/faults/failpoints';
import type { MergeQueueOperation as OperationRow, Prisma } from '@/generated/prisma/client';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { classifyMergeQueueGitFailure, type MergeQueueGitFailure } from '@/modules/git-providers/merge-queue-failures';
import { type Fence, fullRef, type LandMethod, type MergeQueueGit } from '@/modules/git-providers/merge-queue-git';
import type { MergeQueueEvent, MergeQueueOperation, MergeQueueOperationKind, MergeQueueState, ReadBackFacts } from '../planner';
import { policyOf } from '../policy/queue-policy';
import { MergeQueueGits } from './gits';
import { candidateRef } from './ids';
import { fenceRef, type Lease, LeaseLost, renewEveryMs } from './lease';
import { MergeQueueWriter } from './queue-writer';
import { MergeQueueOutboxRepository } from './store/outbox.repository';
import type { QueueWithSource } from './store/queue-view';

/** What an operation's row keeps beside its answer to the planner (a prepare: the commits each PR added, and how). */
interface OperationRecordDetail {
  detail?: Prisma.InputJsonObject;
}

/** How the executor reached an outcome; stored on the operation row. */
type Outcome = 'succeeded' | 'failed' | 'unknown';

/** Operations the executor starts before the rest: they finish batches (and a readBack runs alone). */
const URGENT_OPERATION_KINDS: readonly MergeQueueOperationKind[] = ['land', 'readBack'];

/** Safety bound on one executor run; the next run (kicked at completion) continues. */
export const MAX_OPERATIONS_PER_RUN = 500;
/**
 * Operations of one queue (of different batches) performed at once by its executor. Two lets a
 * land or readBack run beside a long `prepare`; with the worker's 4 executors that is at most 8
 * transactions at once, within the default DATABASE_POOL_SIZE of 10.
 */
export const OPERATIONS_IN_FLIGHT = 2;
/** How often a running executor looks for operations that arrived while it works. */
export const OUTBOX_POLL_MS = 25;

/**
 * An operation the executor could not perform, classified (see classifyMergeQueueGitFailure): the
 * run ends with it and the worker decides (backoff, or quarantine). A transient or refused one was
 * put back to `pending` (it is performed again later); an unexpected one stays `running` and is
 * reconciled by the next run, as after a crash.
 */
export class OperationFailure extends Error {
  constructor(
    readonly failure: MergeQueueGitFailure,
    readonly operationId: string,
    readonly operationKind: MergeQueueOperation['kind'],
    readonly cause?: unknown,
  ) {
    super(`${operationKind} ${operationId} failed (${failure.kind}): ${failure.reason}`);
    this.name = 'OperationFailure';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How a run ended: operations performed, or nothing because another executor holds the queue's lease. */
export interface RunResult {
  performed: number;
  leaseBusy: boolean;
}

/**
 * The outbox executor of one queue. A run first takes the queue's lease (docs/merge-queue.md,
 * "Fencing"): a holder id of its own and an epoch the database grows on every take; a run that
 * finds the lease held by a live executor ends at once without work. It renews the lease every
 * third of MERGE_QUEUE_LEASE_MS and stops at once (an AbortSignal every step checks) when a
 * renewal is refused or fails, or when BullMQ says the job's lock is lost; every write it makes is
 * applied under the queue row's lock only while the row still names its holder and epoch (else
 * LeaseLost, nothing written). An operation it finds `running` and claimed under an older epoch was
 * left by an executor whose lease is over: it becomes `operationUnknown`, and the planner asks for
 * a `readBack`, which first moves the queue's fence ref so that a land of the old executor still
 * in flight can never apply (the land is atomic with a check of the fence). Each pending
 * operation, in the order the planner issued them, is:
 *   1. marked `running` in its own committed transaction (operationStarted), just before
 *   2. its side effect, done idempotently (deterministic candidates and candidate refs, a
 *      compare-and-swap of the base), and then
 *   3. answered as a new event, which may issue more operations (the loop picks them up).
 * An operation the planner no longer waits for (its batch moved on) is skipped, never performed.
 * A provider failure is classified (OperationFailure): a land refused for good is answered
 * `landRefused` (the queue holds); a transient failure puts the operation back to `pending` and ends
 * the run (the worker retries with backoff); an unexpected error leaves the operation `running` and
 * ends the run; the next executor reconciles it, exactly as after a crash.
 */
@Injectable()
export class MergeQueueExecutor {
  private readonly logger = new Logger(MergeQueueExecutor.name);

  private readonly leaseMs: number;
  /**
   * A run gives its worker slot back after this long (MERGE_QUEUE_EXECUTOR_SLICE_MS); the next run
   * of the queue is kicked at completion and waits its turn behind other queues' runs, so a busy
   * queue cannot keep a slot for as long as it has work while other queues wait.
   */
  private readonly sliceMs: number;

  constructor(
    protected readonly writer: MergeQueueWriter,
    protected readonly outbox: MergeQueueOutboxRepository,
    private readonly gits: MergeQueueGits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.leaseMs = config.mergeQueues.leaseMs;
    this.sliceMs = config.mergeQueues.executorSliceMs;
  }

  /**
   * Runs the queue's outbox until it is empty (or the run's time slice is over); returns how many
   * operations were performed. Up to OPERATIONS_IN_FLIGHT operations run at once: each batch has
   * one operation at a time, so operations of different batches are independent (the planner
   * takes their outcomes in any order), and a land need not wait for the next batch's `prepare`
   * of 16 merges. While operations run, the outbox is looked at again every OUTBOX_POLL_MS for
   * work that arrived meanwhile (a kick for a queue whose executor is running is ignored).
   */
  async drain(queueId: string, options: { signal?: AbortSignal } = {}): Promise<number> {
    return (await this.run(queueId, options)).performed;
  }

  /**
   * One executor run: takes the lease (or ends at once when another executor holds it), drains
   * under it while renewing it, and gives it back. Throws LeaseLost when the lease was lost or
   * `signal` aborted (BullMQ lost the job's lock) before the run ended: nothing was written after.
   */
  async run(queueId: string, options: { signal?: AbortSignal } = {}): Promise<RunResult> {
    // A quarantined queue performs nothing until it is resumed (the sweep does not start it either).
    // A run with nothing to do (no unfinished operation, no move: a kick whose work an earlier run
    // already did) ends here without taking the lease: it would write nothing.
    // Work issued after this read kicks the queue again (or is found when this job completes).
    const work = await this.outbox.executorWork(queueId);
    if (!work || (work.kinds.length === 0 && !work.moving)) return { performed: 0, leaseBusy: false };
    const landing = work.kinds.includes('land');
    const lease = await this.outbox.takeLease(queueId, randomUUID(), this.leaseMs);
    if (!lease) return { performed: 0, leaseBusy: true };
    const controller = new AbortController();
    const outer = options.signal;
    const onOuterAbort = () => controller.abort(new LeaseLost(lease, `the job was aborted (${String(outer?.reason ?? 'lock lost')})`));
    if (outer?.aborted) onOuterAbort();
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    const renewal = setInterval(() => {
      this.renew(lease).then(
        (held) => held || controller.abort(new LeaseLost(lease, 'a renewal was refused: another executor took the queue')),
        (error: Error) => controller.abort(new LeaseLost(lease, `a renewal failed (${error.message})`)),
      );
    }, renewEveryMs(this.leaseMs));
    try {
      // The queue as it is under this lease: the row read above may predate the last holder's
      // base-ref move (completeMigration), and a run on that snapshot would build and land on the
      // old base ref (seen: a PR landed on main after the queue had moved to release).
      const held = await this.outbox.queueForWorker(queueId);
      if (!held || held.quarantined) return { performed: 0, leaseBusy: false };
      return { performed: await this.drainHolding(held, lease, controller.signal, landing), leaseBusy: false };
    } finally {
      clearInterval(renewal);
      outer?.removeEventListener('abort', onOuterAbort);
      await this.outbox
        .releaseLease(lease)
        .catch((error: unknown) => this.logger.warn({ err: error, queueId }, 'could not give the merge-queue lease back; it expires'));
    }
  }

  /** Extends the lease; false when another executor took it (overridden by tests that stall a run). */
  protected renew(lease: Lease): Promise<boolean> {
    return this.outbox.renewLease(lease, this.leaseMs);
  }

  private async drainHolding(queue: QueueWithSource, lease: Lease, signal: AbortSignal, landing: boolean): Promise<number> {
    const queueId = queue.id;
    const git = await this.gits.forSource(queue.repository);
    const method = policyOf(queue.policy).mergeMethod;
    const fences = new RunFence(() => this.currentFence(queueId, git, queue.baseRef));
    // A land is waiting: its fence is read now, beside the queries below, not after them.
    if (landing) fences.prefetch();
    await this.reconcileOrphans(lease);
    const started = Date.now();
    const inFlight = new Map<string, { row: OperationRow; done: Promise<void> }>();
    let performed = 0;
    let failure: { error: unknown } | undefined;
    try {
      for (;;) {
        const free = OPERATIONS_IN_FLIGHT - inFlight.size;
        if (!failure && !signal.aborted && free > 0 && performed + inFlight.size < MAX_OPERATIONS_PER_RUN && Date.now() - started < this.sliceMs) {
          const running = [...inFlight.values()].map((f) => f.row);
          for (const row of await this.nextOperations(queueId, running, free)) {
            const done = this.runOne(git, queue.baseRef, method, row, lease, signal, fences).then(
              (claimed) => void (performed += claimed ? 1 : 0),
              (error: unknown) => void (failure ??= { error }),
            );
            inFlight.set(row.id, { row, done: done.finally(() => inFlight.delete(row.id)) });
          }
        }
        if (inFlight.size === 0) break;
        await Promise.race([...[...inFlight.values()].map((f) => f.done), sleep(OUTBOX_POLL_MS)]);
      }
    } finally {
      // Never leave an operation running unattended: the job ends only when every one has ended.
      await Promise.allSettled([...inFlight.values()].map((f) => f.done));
    }
    // Lost the lease (or the job's lock): stop here, writing nothing more.
    if (signal.aborted) throw signal.reason instanceof LeaseLost ? signal.reason : new LeaseLost(lease, String(signal.reason));
    // An operation that threw stays `running`; the next executor reconciles it (as after a crash).
    if (failure) throw failure.error;
    if (queue.pendingBaseRef !== null) await this.completeMigration(queueId, git, lease);
    return performed;
  }

  /** Claims, performs and answers one operation; false when it was not claimed (taken or superseded). */
  private async runOne(
    git: MergeQueueGit,
    baseRef: string,
    method: LandMethod,
    row: OperationRow,
    lease: Lease,
    signal: AbortSignal,
    fences: RunFence,
  ): Promise<boolean> {
    const { queueId } = lease;
    const op = row.payload as unknown as MergeQueueOperation;
    signal.throwIfAborted();
    // A land's fence is read BEFORE the claim: the claim commits only under this lease, which proves
    // that no newer executor had taken the queue (and so moved the fence) when the fence was read.
    let fence: Fence | undefined;
    let baseMissing = false;
    if (op.kind === 'land') {
      try {
        fence = await fences.get();
      } catch (error) {
        // The queue's first fence is made from the base, which is gone: nothing can land on it.
        if (!(error instanceof ProviderFailure && error.kind === 'not_found' && (await git.readRef(baseRef)) === null)) throw error;
        baseMissing = true;
      }
    }
    if (!(await this.markRunning(row, op, lease))) return false;
    signal.throwIfAborted();
    failpoint(`merge-queue.executor.${op.kind}.before`, queueId);
    let event: MergeQueueEvent;
    const record: OperationRecordDetail = {};
    try {
      event = baseMissing
        ? { type: 'landRefused', operationId: op.id, reason: `the base ref ${baseRef} does not exist`, at: Date.now() }
        : await this.perform(queueId, git, baseRef, { method, record }, op, fence, signal, fences);
    } catch (error) {
      // Stopped because the lease (or the job lock) was lost: no failure of the provider's, and the
      // operation is the next executor's to read back.
      if (error instanceof LeaseLost) throw error;
      if (signal.aborted) throw signal.reason instanceof LeaseLost ? signal.reason : error;
      const failure = classifyMergeQueueGitFailure(error);
      // A land refused for good (a protected branch, a permission, a deleted ref): the queue stops
      // with the reason after this one try, instead of trying again forever.
      if (failure.kind === 'refused' && op.kind === 'land') event = { type: 'landRefused', operationId: op.id, reason: failure.reason, at: Date.now() };
      else {
        if (failure.kind !== 'unexpected') await this.outbox.releaseOperation(queueId, row.id, lease);
        throw new OperationFailure(failure, op.id, op.kind, error);
      }
    }
    failpoint(`merge-queue.executor.${op.kind}.after`, queueId);
    // Lost meanwhile: the outcome is not written; the next executor reads it back.
    signal.throwIfAborted();
    await this.deliver(row, event, outcomeOf(event), lease, record.detail);
    return true;
  }

  /** Where the queue's fence ref points, created on the first land. */
  private async currentFence(queueId: string, git: MergeQueueGit, baseRef: string): Promise<Fence> {
    const ref = fenceRef(queueId);
    return { ref, sha: (await git.readRef(ref)) ?? (await git.moveFence(ref, baseRef, true)) };
  }

  /**
   * Moves a `migrating` queue to the base ref PATCH asked for, once nothing is landing on the old
   * one: reads the new ref's head, then, under the queue lock, re-checks and applies `migrated`
   * with the new ref in the same transaction. Batches built on the old base go stale and their PRs
   * are planned again on the new one. Returns false while a land is still in flight.
   */
  async completeMigration(queueId: string, git: MergeQueueGit, lease: Lease): Promise<boolean> {
    const queue = await this.outbox.queueForWorker(queueId);
    if (!queue || queue.pendingBaseRef === null) return false;
    const target = queue.pendingBaseRef;
    const baseSha = await git.readRef(target);
    if (baseSha === null) {
      this.logger.warn({ queueId, baseRef: target }, 'the new base ref of a migrating merge queue is gone; the queue stays migrating until it is set again');
      return false;
    }
    // Decided once, in build, on the state BEFORE `migrated`: that event lets the queue plan again,
    // and the same reduce may issue a land at once (a batch whose CI passed while the queue was
    // migrating, its candidate still on the new base when the new ref points where the old one
    // did). That land is on the new ref; judged on the state after the event it looked like a land
    // in flight on the old one, the ref was not moved while `migrated` was, and the land went to
    // the old ref (seen under load: a PR landed on main while the queue still showed migrating).
    let move = false;
    const { result: moved } = await this.writer.apply({
      organizationId: null,
      queueId,
      lease,
      // A migrating queue ends its move with `migrated`; one disabled (or disabled and enabled)
      // meanwhile has its base moved under it (`baseMoved`): its batches on the old base go stale.
      build: ({ row, state }) => {
        move = row.pendingBaseRef === target && !state.batches.some(isLanding);
        return move ? [state.status === 'migrating' ? { type: 'migrated', baseSha, at: Date.now() } : { type: 'baseMoved', baseSha, at: Date.now() }] : [];
      },
      detail: { baseRef: target },
      // The new ref is the queue's in the same transaction as the event: no land issued from here on
      // can be performed on the old one (a run reads the ref under its lease, see run()).
      after: async (q) => {
        if (!move) return false;
        await q.setQueueFields({ baseRef: target, pendingBaseRef: null });
        return true;
      },
    });
    return moved;
  }

  /**
   * Up to `limit` pending operations that may start beside `running`: `land` and `readBack` first,
   * then the rest in the order the planner issued them. Two operations of one batch never run at
   * once (a `cleanup` issued while its batch's `publish` runs must not delete the ref before it is
   * written), and a `readBack` runs alone (its facts must not be overtaken by a land beside it).
   */
  private async nextOperations(queueId: string, running: OperationRow[], limit: number): Promise<OperationRow[]> {
    if (running.some((r) => r.kind === 'readBack')) return [];
    const busy = new Set(running.map((r) => r.batchId));
    const exclude = running.map((r) => r.id);
    // A few more than asked for: some may be held back by the rules above.
    const take = limit + running.length + 4;
    const urgent = await this.outbox.pendingOperations(queueId, { kinds: URGENT_OPERATION_KINDS }, exclude, take);
    const rest = await this.outbox.pendingOperations(queueId, { kinds: URGENT_OPERATION_KINDS, not: true }, exclude, take);
    const picked: OperationRow[] = [];
    for (const row of [...urgent, ...rest]) {
      if (picked.length >= limit || busy.has(row.batchId)) continue;
      if (row.kind === 'readBack') return running.length === 0 && picked.length === 0 ? [row] : picked;
      picked.push(row);
      busy.add(row.batchId);
    }
    return picked;
  }

  /**
   * An operation still `running` that an older lease claimed belongs to an executor whose lease is
   * over (it expired or was given back): its outcome is unknown. One claimed under this very lease
   * is never touched.
   */
  async reconcileOrphans(lease: Lease): Promise<number> {
    const orphans = await this.outbox.orphanedOperations(lease);
    for (const row of orphans) {
      this.logger.warn(
        { queueId: lease.queueId, operation: row.plannerKey, kind: row.kind, ownerEpoch: row.ownerEpoch?.toString() ?? null, epoch: lease.epoch.toString() },
        'operation left running by an executor whose lease is over; reconciling',
      );
      await this.deliver(row, { type: 'operationUnknown', operationId: row.plannerKey, at: Date.now() }, 'unknown', lease);
    }
    return orphans.length;
  }

  /**
   * Step 1: claims the operation and commits `running` before the side effect. The claim is made
   * under the queue row's lock and only from `pending`, so of two executors that read the same
   * pending row (a stalled job re-run while its first run still lives), exactly one performs it.
   * False when another executor claimed it or the planner no longer waits for it.
   */
  private async markRunning(row: OperationRow, op: MergeQueueOperation, lease: Lease): Promise<boolean> {
    const { result } = await this.writer.apply({
      organizationId: null,
      queueId: lease.queueId,
      lease,
      build: async ({ state }, q) => {
        if (!(await q.operationClaimable(row.id))) return [];
        return isAwaited(state, op) ? [{ type: 'operationStarted', operationId: op.id, at: Date.now() }] : [];
      },
      after: async (q, { state }) => {
        if (!isAwaited(state, op)) {
          await q.supersedeOperation(row.id);
          return false;
        }
        return q.claimOperation(row.id, lease);
      },
      // The operation starts now, in this executor: nothing to wake.
      wake: 'none',
    });
    return result;
  }

  /** Step 3: the outcome as a new event, and the operation row finished, in one transaction. */
  private async deliver(row: OperationRow, event: MergeQueueEvent, outcome: Outcome, lease: Lease, detail?: Prisma.InputJsonObject): Promise<void> {
    await this.writer.apply({
      organizationId: null,
      queueId: lease.queueId,
      lease,
      build: () => [event],
      detail: { kind: row.kind },
      after: async (q, queue) => {
        await q.finishOperation(row.id, outcome, { ...resultOf(event), ...detail });
        // An operation answered (not an orphan reconciled): the failures in a row are over.
        if (outcome !== 'unknown' && queue.row.failureCount > 0) await q.resetFailures();
      },
      // This executor picks up the operations the answer issued; only the check timers are kept.
      wake: 'timers',
    });
  }

  /** Step 2: the side effect. Known refusals become `operationFailed`; anything unexpected propagates. */
  private async perform(
    queueId: string,
    git: MergeQueueGit,
    baseRef: string,
    { method, record }: { method: LandMethod; record: OperationRecordDetail },
    op: MergeQueueOperation,
    fence: Fence | undefined,
    signal: AbortSignal,
    fences: RunFence,
  ): Promise<MergeQueueEvent> {
    const at = () => Date.now();
    switch (op.kind) {
      case 'prepare': {
        // Built on a scratch branch of this operation's own (GitHub): two executors never share one.
        // Shaped as the queue lands (its mergeMethod now): the commit CI tests is the commit that lands.
        const titles =
          method === 'squash'
            ? await this.outbox.entryTitles(
                queueId,
                op.heads.map((h) => h.entryId),
              )
            : new Map<string, string | null>();
        const heads = op.heads.map((h) => ({ ...h, title: titles.get(h.entryId) ?? null }));
        const built = await git.buildCandidate(op.baseSha, heads, candidateRef(queueId, op.batchId), { scratch: `${queueId}/${op.id}`, signal, method });
        if (built.ok) {
          // What each PR added, kept on the operation (not the planner's event) for the PR's landing note.
          record.detail = { method, landed: built.landed.map((l) => ({ ...l })) };
          return { type: 'operationSucceeded', operationId: op.id, candidateSha: built.candidateSha, at: at() };
        }
        return { type: 'operationFailed', operationId: op.id, reason: built.reason, conflictEntryId: built.conflictEntryId, at: at() };
      }
      case 'publish':
        await git.publishRef(candidateRef(queueId, op.batchId), op.candidateSha);
        return { type: 'operationSucceeded', operationId: op.id, at: at() };
      case 'startCi':
        // CI is started by the published candidate ref (CI systems watch refs/heads/mq/...), and
        // reports through POST /merge-queues/{id}/batches/{batchId}/checks: nothing more to do.
        return { type: 'operationSucceeded', operationId: op.id, at: at() };
      case 'land': {
        // Atomic with the check of the fence read before the claim (see runOne).
        if (await git.land(fullRef(baseRef), op.candidateSha, op.expectedBaseSha, fence as Fence)) {
          return { type: 'operationSucceeded', operationId: op.id, at: at() };
        }
        // Refused: the base moved, or the fence did (then this run's copy is stale; read it again).
        fences.forget();
        const head = await git.readRef(baseRef);
        // The base ref is gone: no land can succeed until someone creates it again (or moves the queue).
        if (head === null) return { type: 'landRefused', operationId: op.id, reason: `the base ref ${baseRef} does not exist`, at: at() };
        if (await git.isAncestor(op.candidateSha, head)) {
          // Landed already (an earlier attempt of this very operation): the land happened.
          return { type: 'operationSucceeded', operationId: op.id, at: at() };
        }
        return { type: 'operationFailed', operationId: op.id, reason: `the base moved to ${head}`, baseSha: head, at: at() };
      }
      case 'readBack':
        return { type: 'operationSucceeded', operationId: op.id, readBack: await this.readBack(queueId, git, baseRef, op, fences), at: at() };
      case 'cleanup':
        await git.deleteRef(candidateRef(queueId, op.batchId));
        return { type: 'operationSucceeded', operationId: op.id, at: at() };
    }
  }

  private async readBack(
    queueId: string,
    git: MergeQueueGit,
    baseRef: string,
    op: Extract<MergeQueueOperation, { kind: 'readBack' }>,
    fences: RunFence,
  ): Promise<ReadBackFacts> {
    // The fence first: a land of an older executor still in flight checks the fence it read, so
    // from here on it cannot apply, and what is read below stays true (docs/merge-queue.md, "Fencing").
    // A readBack runs alone (nextOperations): no land of this run holds the copy it replaces.
    fences.moved({ ref: fenceRef(queueId), sha: await git.moveFence(fenceRef(queueId), baseRef) });
    const baseSha = await git.readRef(baseRef);
    if (baseSha === null) throw new Error(`base ref ${baseRef} is missing; cannot read back`);
    const candidate = op.candidateSha !== null && (await git.hasCommit(op.candidateSha)) ? op.candidateSha : null;
    const published = candidate !== null && (await git.readRef(candidateRef(queueId, op.batchId))) === candidate;
    return {
      baseSha,
      candidateSha: candidate,
      candidateLanded: candidate !== null && (await git.isAncestor(candidate, baseSha)),
      published,
      // startCi has no side effect of its own (see perform): CI exists once the candidate is published.
      ciStarted: published,
    };
  }
}

/**
 * The queue's fence ref as one executor run knows it. Read after the run took its lease, so the
 * argument of runOne holds for every land of the run: each land's claim commits only under this
 * lease, which proves that no newer executor had taken the queue (and so moved the fence) since the
 * read. The run's own readBack moves the fence (moved); a refused land drops the copy (forget): an
 * older executor's readBack still finishing may have moved it.
 */
class RunFence {
  private copy: Promise<Fence> | undefined;

  constructor(private readonly read: () => Promise<Fence>) {}

  get(): Promise<Fence> {
    if (!this.copy) {
      const reading = this.read();
      this.copy = reading;
      // A failed read is not kept: the next land reads again.
      reading.catch(() => {
        if (this.copy === reading) this.copy = undefined;
      });
    }
    return this.copy;
  }

  /** Starts the read now (its failure, if any, is met by the land that awaits it). */
  prefetch(): void {
    void this.get().catch(() => undefined);
  }

  moved(fence: Fence): void {
    this.copy = Promise.resolve(fence);
  }

  forget(): void {
    this.copy = undefined;
  }
}

/** A land is issued or in doubt: the queue cannot change its base ref under it. */
function isLanding(b: MergeQueueState['batches'][number]): boolean {
  return (
    b.status === 'merging' || (b.status === 'reconciling' && b.operation?.kind === 'land') || (b.status === 'reconciling' && b.operation?.kind === 'readBack')
  );
}

/** The planner still waits for this operation: it is its batch's current one, or a pending cleanup. */
export function isAwaited(state: MergeQueueState, op: MergeQueueOperation): boolean {
  if (op.kind === 'cleanup') return state.cleanups.some((c) => c.operationId === op.id);
  return state.batches.some((b) => b.id === op.batchId && b.operation?.id === op.id);
}

function outcomeOf(event: MergeQueueEvent): Outcome {
  return event.type === 'operationSucceeded' ? 'succeeded' : event.type === 'operationFailed' || event.type === 'landRefused' ? 'failed' : 'unknown';
}

function resultOf(event: MergeQueueEvent): Prisma.InputJsonObject {
  const { type, at: _at, ...rest } = event as MergeQueueEvent & Record<string, unknown>;
  return { type, ...rest } as Prisma.InputJsonObject;
}
