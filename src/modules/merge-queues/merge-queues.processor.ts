import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Inject, Optional } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { DelayedError, type Job, type Queue } from 'bullmq';
import { type JobHandlers, jobNamed } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { MergeQueuesJob, QueueName } from '@/common/queues/queue-names';
import type { RepeatableJob } from '@/common/queues/repeatable-jobs';
import { providerFailureOf } from '@/modules/git-providers/git-provider.port';
import { classifyMergeQueueGitFailure } from '@/modules/git-providers/merge-queue-failures';
import { MergeQueuePaths, PATHS_SWEEP_KEY } from './changed-paths/changed-paths';
import { PathsAsks } from './changed-paths/paths-asks';
import { MergeQueuePathsRepository } from './changed-paths/paths.repository';
import { MergeQueueExecutor, OperationFailure, type RunResult } from './engine/executor';
import { decideAfterFailure, type FailureDecision } from './engine/failure-policy';
import { LeaseLost } from './engine/lease';
import { MergeQueueMetrics } from './engine/metrics';
import { MergeQueueWriter } from './engine/queue-writer';
import type { MergeQueuesPayloads } from './engine/jobs';
import { MergeQueueScheduler } from './engine/scheduler';
import { MergeQueueOutboxRepository } from './engine/store/outbox.repository';
import { MergeQueueTitles } from './titles/pr-titles';

const isMergeQueuesJob = jobNamed<MergeQueuesPayloads>();

/** How many times the changed-paths job waits for a provider rate limit before it counts as failed. */
const RATE_LIMIT_DELAYS = 10;

/**
 * The merge-queue worker: executors (one per queue at a time), ticks for check timeouts, and the
 * sweep that restarts executors nobody is running. The sweep also runs at worker start, so an
 * operation left `running` by a worker that died is reconciled as soon as a worker is back.
 * JobProcessor owns the rest: the Worker's settings from config (`jobs.workers['merge-queues']`: a
 * worker that dies holding an executor job loses its lock after lockDuration, and another worker's
 * stalled-job check runs the job again, whose executor reconciles), the sweep's job scheduler (re-
 * created when Redis loses it), and one log line per job done or failed.
 */
@Processor(QueueName.MergeQueues)
export class MergeQueuesProcessor extends JobProcessor<MergeQueuesPayloads> {
  /** Executor jobs running here, by job id: aborted when BullMQ cannot renew the job's lock. */
  private readonly running = new Map<string, AbortController>();

  readonly handlers: JobHandlers<MergeQueuesPayloads> = {
    [MergeQueuesJob.Execute]: (job, token) => this.execute(job, token),
    [MergeQueuesJob.Tick]: (job) => this.tick(job.data.queueId),
    [MergeQueuesJob.Sweep]: () => this.sweep(),
    [MergeQueuesJob.AskPaths]: (job, token) => this.askPaths(job, token),
    [MergeQueuesJob.SweepPaths]: () => this.sweepPaths(),
    [MergeQueuesJob.ReadTitle]: (job) => this.titles.read(job.data),
  };

  constructor(
    private readonly executor: MergeQueueExecutor,
    private readonly writer: MergeQueueWriter,
    private readonly outbox: MergeQueueOutboxRepository,
    private readonly scheduler: MergeQueueScheduler,
    private readonly paths: MergeQueuePaths,
    private readonly pathsRepository: MergeQueuePathsRepository,
    private readonly asks: PathsAsks,
    private readonly titles: MergeQueueTitles,
    @InjectQueue(QueueName.MergeQueues) queue: Queue,
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() private readonly metrics?: MergeQueueMetrics,
  ) {
    super(QueueName.MergeQueues, config, queue);
  }

  protected repeatableJobs(): RepeatableJob[] {
    return [
      { id: MergeQueuesJob.Sweep, repeat: { every: this.config.mergeQueues.sweepIntervalMs }, opts: { attempts: 1 } },
      { id: MergeQueuesJob.SweepPaths, repeat: { every: this.config.mergeQueues.pathsSweepIntervalMs }, opts: { attempts: 1 } },
    ];
  }

  async onApplicationBootstrap(): Promise<void> {
    // BullMQ could not extend these jobs' locks: another worker may run them again (stalled-job
    // check), so their executors stop at once (BullMQ 6 emits this; it does not abort the signal).
    this.worker.on('lockRenewalFailed', (jobIds: string[]) => {
      for (const id of jobIds) this.lockLost(id);
    });
    // An executor that finished may have missed a kick that arrived while it was still active
    // (BullMQ ignores a job id that exists): look again once its job is gone.
    this.worker.on('completed', (job: Job) => void this.afterExecutor(job, 0));
    this.worker.on('failed', (job: Job | undefined) => {
      if (job) void this.afterExecutor(job, this.config.mergeQueues.executorRetryDelayMs);
    });
    await super.onApplicationBootstrap();
    await this.sweep();
  }

  async process(job: Job, token?: string, signal?: AbortSignal): Promise<unknown> {
    if (job.name !== MergeQueuesJob.Execute || job.id === undefined) return super.process(job, token);
    const controller = new AbortController();
    // A cancelled job (worker.cancelJob) stops its executor the same way.
    signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    this.running.set(job.id, controller);
    try {
      return await super.process(job, token);
    } finally {
      if (this.running.get(job.id) === controller) this.running.delete(job.id);
    }
  }

  /**
   * Asks the changed paths a queue's entries lack (MergeQueuePaths.fill, progress `{done, of}`). A
   * provider rate limit puts the job back until its Retry-After (60 s without one) without using an
   * attempt, at most RATE_LIMIT_DELAYS times; what was asked before it is kept. While it runs or
   * waits the queue is claimed (PathsAsks), so the paths sweep does not ask the same entries again;
   * after a failure the sweep leaves the queue alone for a while.
   */
  private async askPaths(job: Job<MergeQueuesPayloads[typeof MergeQueuesJob.AskPaths]>, token: string | undefined): Promise<unknown> {
    const { queueId, rateLimitHits = 0 } = job.data;
    try {
      await this.asks.claim(queueId);
      const result = await this.paths.fill(queueId, async (done, of) => {
        await job.updateProgress({ done, of });
        await this.asks.claim(queueId);
      });
      await this.asks.done(queueId);
      return result;
    } catch (error) {
      const failure = providerFailureOf(error);
      if (failure?.kind !== 'rate_limited' || !token || rateLimitHits >= RATE_LIMIT_DELAYS) {
        await this.asks.claim(queueId, Date.now() + this.asks.failurePauseMs);
        throw error;
      }
      await job.updateData({ ...job.data, rateLimitHits: rateLimitHits + 1 });
      const delayS = Math.max(1, failure.retryAfterSeconds ?? 60);
      await this.asks.claim(queueId, Date.now() + delayS * 1000 + this.asks.claimMs);
      this.logger.log({ queueId, delayS }, 'merge-queue changed paths delayed by the provider rate limit');
      return this.delay(job, token, delayS * 1000);
    }
  }

  /**
   * The paths sweep (every MERGE_QUEUE_PATHS_SWEEP_INTERVAL_MS): a queue with path groups holding
   * live entries whose changed paths were never kept for their head (the job that was to ask them
   * was lost with Redis, or failed all its attempts) gets a job that asks them, one per queue at a
   * time (`paths-<queue>-sweep`, tried once). A queue with a job on its way, or whose last job
   * failed a short while ago, is left alone (PathsAsks; `now` is when the sweep runs). Until then
   * those PRs are in every lane, which is safe but slow.
   */
  async sweepPaths(now = Date.now()): Promise<{ asked: string[] }> {
    const claimed = await this.asks.claimed(now);
    const queueIds = (await this.pathsRepository.queuesMissingPaths()).filter((id) => !claimed.has(id));
    for (const queueId of queueIds) await this.paths.ask(queueId, PATHS_SWEEP_KEY);
    if (queueIds.length) this.logger.log({ queues: queueIds.length }, 'merge-queue paths sweep asked the paths entries lack');
    return { asked: queueIds };
  }

  /** The job's lock is lost: its executor aborts (writes nothing more; it gives its lease back). */
  lockLost(jobId: string): void {
    const controller = this.running.get(jobId);
    if (!controller) return;
    this.logger.warn({ job: jobId }, 'merge-queue executor lost its job lock; stopping it');
    controller.abort(new Error('BullMQ lost the job lock'));
  }

  /**
   * One executor run, unless the queue is still backing off after a failure. A run that failed
   * is counted (failures in a row, in Postgres) and decided by the failure policy: the same job
   * waits (moved to delayed, so kicks meanwhile are no-ops) or the queue is quarantined.
   */
  private async execute(job: Job<MergeQueuesPayloads[typeof MergeQueuesJob.Execute]>, token: string | undefined): Promise<RunResult & { leaseLost?: true }> {
    const { queueId } = job.data;
    const wait = await this.outbox.retryWaitMs(queueId);
    if (wait > 0) return this.delay(job, token, wait);
    try {
      return await this.executor.run(queueId, { signal: this.running.get(job.id ?? '')?.signal });
    } catch (error) {
      // A run that lost its lease (or its job lock) ends quietly: the queue is in other hands.
      if (error instanceof LeaseLost) {
        this.logger.warn({ queueId, reason: error.message }, 'merge-queue executor stopped: it lost its lease');
        return { performed: 0, leaseBusy: false, leaseLost: true };
      }
      const decision = await this.afterFailure(queueId, error);
      if (decision.quarantine) return { performed: 0, leaseBusy: false };
      return this.delay(job, token, decision.delayMs);
    }
  }

  /** Puts the running job back as delayed (its id stays taken: no other executor of the queue starts meanwhile). */
  private async delay(job: Job, token: string | undefined, delayMs: number): Promise<never> {
    await job.moveToDelayed(Date.now() + delayMs, token);
    throw new DelayedError();
  }

  /** Counts the failure, and backs off or quarantines (a refusal waiting will not change: at once). */
  async afterFailure(queueId: string, error: unknown): Promise<FailureDecision> {
    const failure = error instanceof OperationFailure ? error.failure : classifyMergeQueueGitFailure(error);
    const operation = error instanceof OperationFailure ? `${error.operationKind} ` : '';
    const failures = await this.outbox.recordFailure(queueId);
    this.metrics?.workerError('executor');
    const { retryBaseMs: baseMs, retryMaxMs: maxMs, quarantineAfter } = this.config.mergeQueues;
    const decision: FailureDecision =
      failure.kind === 'refused'
        ? { quarantine: true }
        : decideAfterFailure({ baseMs, maxMs, quarantineAfter }, failures, failure.kind === 'transient' ? failure.retryAfterMs : undefined, Math.random());
    this.logger.warn(
      { err: error, queueId, failures, failure: failure.kind, ...decision },
      decision.quarantine ? 'merge-queue executor failed; quarantining the queue' : 'merge-queue executor failed; retrying after a backoff',
    );
    if (!decision.quarantine) {
      await this.outbox.setRetryAt(queueId, new Date(Date.now() + decision.delayMs));
      return decision;
    }
    const reason =
      failure.kind === 'refused'
        ? `${operation}refused by the provider: ${failure.reason}`
        : `${failures} failures in a row; the last: ${operation}${failure.reason}`;
    try {
      await this.writer.apply({
        organizationId: null,
        queueId,
        build: () => [{ type: 'quarantined', reason, at: Date.now(), ...(error instanceof OperationFailure && { operationId: error.operationId }) }],
        wake: 'none',
      });
      this.metrics?.quarantined();
      return decision;
    } catch (applyError) {
      // The queue could not even be put on hold (its planner fails too): wait as long as allowed.
      this.logger.error({ err: applyError, queueId }, 'could not quarantine a failing merge queue; retrying after the longest backoff');
      await this.outbox.setRetryAt(queueId, new Date(Date.now() + maxMs));
      return { quarantine: false, delayMs: maxMs };
    }
  }

  /**
   * Starts an executor for every queue with unfinished operations, and ticks queues whose CI may
   * have timed out. Each queue on its own: one that fails (its planner throws, its row is locked
   * too long) is logged with its id and counted, and the sweep goes on with the others.
   */
  async sweep(): Promise<{ swept: string[]; failed: string[] }> {
    const { unfinished, moving, due } = await this.outbox.sweepTargets();
    // A queue may be both kicked and ticked: it counts as swept only when every step for it went
    // through, and as failed (once) when any did not.
    const failed = new Set<string>();
    const handled = new Set<string>();
    const each = async (queueId: string, what: string, run: () => Promise<void>) => {
      handled.add(queueId);
      try {
        await run();
      } catch (error) {
        failed.add(queueId);
        this.metrics?.workerError('sweep');
        this.logger.error({ err: error, queueId, what }, 'merge-queue sweep could not handle a queue; going on with the others');
      }
    };
    for (const queueId of unfinished) await each(queueId, 'kick', () => this.scheduler.kick(queueId));
    // Queues moving to a new base ref whose executor has not finished the move yet.
    for (const queueId of moving) await each(queueId, 'kick', () => this.scheduler.kick(queueId));
    for (const queueId of due) await each(queueId, 'tick', () => this.tick(queueId));
    return { swept: [...handled].filter((id) => !failed.has(id)), failed: [...failed] };
  }

  private async tick(queueId: string): Promise<void> {
    await this.writer.apply({ organizationId: null, queueId, quietWhenUnchanged: true, build: () => [{ type: 'tick', at: Date.now() }] });
  }

  private async afterExecutor(job: Job, delayMs: number): Promise<void> {
    if (!isMergeQueuesJob(job, MergeQueuesJob.Execute)) return;
    const { queueId } = job.data;
    try {
      // Another executor holds the queue's lease: look again when it expires (it is given back
      // sooner when that run ends, and that run's own completion kicks the queue then).
      if ((job.returnvalue as RunResult | undefined)?.leaseBusy) {
        const remaining = await this.outbox.leaseRemainingMs(queueId);
        await this.scheduler.kick(queueId, Math.min(this.config.mergeQueues.leaseMs, Math.ceil(remaining ?? 0) + 50));
        return;
      }
      const { operations, moving } = await this.outbox.unfinishedWork(queueId);
      // A move still waiting on a land in flight is retried after a pause, not in a tight loop.
      if (operations > 0) await this.scheduler.kick(queueId, delayMs);
      else if (moving) await this.scheduler.kick(queueId, Math.max(delayMs, 5_000));
    } catch (error) {
      this.logger.warn({ err: error, queueId }, 'could not look for unfinished merge-queue operations; the sweep will');
    }
  }
}
