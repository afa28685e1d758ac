import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { type JobHandlers, jobNamed } from '@/common/queues/job-handlers';
import { JobProcessor } from '@/common/queues/job-processor';
import { CommitStatusesJob, QueueName } from '@/common/queues/queue-names';
import type { RepeatableJob } from '@/common/queues/repeatable-jobs';
import { RedisService } from '@/common/redis/redis.module';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import { landedNote } from '@/modules/git-providers/land-messages';
import { type CloseLandedJob, CommitStatusJobs, type CommitStatusesPayloads, type PostCommitStatusJob } from './commit-statuses/commit-status-jobs';
import { CommitStatusLedger, CommitStatusRepairs } from './commit-statuses/commit-status-ledger';
import { currentStatus } from './commit-statuses/commit-statuses';
import { MergeQueueGits } from './engine/gits';
import { batchRowId } from './engine/ids';
import { MergeQueueOutboxRepository } from './engine/store/outbox.repository';
import { MergeQueuesRepository } from './merge-queues.repository';

const isCommitStatusesJob = jobNamed<CommitStatusesPayloads>();

/** The most refused statuses one repair run posts again. */
const REPAIRS_PER_RUN = 500;
/** Provider answers that say the post itself is refused (credentials, permissions, the request): no repair would pass. */
const REFUSALS: readonly string[] = ['unauthorized', 'forbidden', 'not_found', 'rejected', 'refused'];

/**
 * Posts the merge queue's commit statuses (context `merge-queue/<baseRef>`) with the integration's
 * credentials. A failed post is retried by BullMQ with exponential backoff; one decided at an older
 * revision than the last posted for the same commit is skipped, and posts for one commit take turns
 * across every worker process (CommitStatusLedger, in Redis), so a retry that comes late never turns
 * a PR's status back. The link is the CI run when CI reported one, otherwise the queue.
 */
@Processor(QueueName.CommitStatuses)
export class CommitStatusesProcessor extends JobProcessor<CommitStatusesPayloads> {
  private readonly ledger: CommitStatusLedger;
  private readonly repairs: CommitStatusRepairs;

  readonly handlers: JobHandlers<CommitStatusesPayloads> = {
    [CommitStatusesJob.Post]: (job) => this.postJob(job),
    [CommitStatusesJob.Repair]: () => this.repair(),
    [CommitStatusesJob.CloseLanded]: (job) => this.closeLanded(job.data),
  };

  constructor(
    private readonly repository: MergeQueuesRepository,
    private readonly outbox: MergeQueueOutboxRepository,
    private readonly gits: MergeQueueGits,
    private readonly jobs: CommitStatusJobs,
    redis: RedisService,
    @InjectQueue(QueueName.CommitStatuses) queue: Queue,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(QueueName.CommitStatuses, config, queue);
    this.repairs = new CommitStatusRepairs(redis.client, config.queuePrefix);
    // A turn outlives a provider call (its timeout, a token refresh and a batch read around it).
    this.ledger = new CommitStatusLedger(redis.client, config.queuePrefix, {
      turnMs: Math.max(30_000, 3 * config.git.timeoutMs),
      waitMs: 5_000,
      // Longer than every retry of a post can last (BullMQ's exponential backoff: delay x (2^(n-1) - 1)), so a late retry still finds the newest revision.
      keepS: Math.max(24 * 3600, Math.ceil((config.mergeQueues.statusPostBackoffMs * (2 ** (config.mergeQueues.statusPostAttempts - 1) - 1)) / 1000) + 3600),
    });
  }

  protected failureContext(job: Job): Record<string, unknown> {
    if (!isCommitStatusesJob(job, CommitStatusesJob.Post)) return super.failureContext(job);
    const { queueId, status } = job.data;
    return { queueId, sha: status.sha };
  }

  protected repeatableJobs(): RepeatableJob[] {
    return [{ id: CommitStatusesJob.Repair, repeat: { every: this.config.mergeQueues.statusRepairIntervalMs }, opts: { attempts: 1 } }];
  }

  /**
   * One post; when it was the last attempt and it failed for a reason that may pass (the provider
   * down, slow or rate limiting, not a refusal of the credentials or the request), the post is kept
   * to be repaired (repair).
   */
  private async postJob(job: Job<PostCommitStatusJob>): Promise<string> {
    const { data } = job;
    try {
      return await this.post(data);
    } catch (error) {
      const refused = error instanceof ProviderFailure && REFUSALS.includes(error.kind);
      if (!refused && job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        await this.repairs.add({ queueId: data.queueId, sha: data.status.sha, subject: data.status.subject }).catch((redisError: unknown) => {
          this.logger.warn({ err: redisError, queueId: data.queueId, sha: data.status.sha }, 'a refused commit status could not be kept for repair');
        });
      }
      throw error;
    }
  }

  /**
   * Posts again the statuses the provider refused on every attempt, each as its queue's state shows
   * it now (a PR behind the front of the line is otherwise re-posted only when it reaches the front):
   * a new post job at the queue's current revision, so it is never older than what was posted since,
   * with an id of its own per run (a repair of a repair, at the same revision, is a new job). A
   * subject the state no longer holds, or whose head moved on, is forgotten; one that fails here is
   * left for the next run, and the others go on. A member is forgotten only if no post failed again
   * since it was read. Repeated every MERGE_QUEUE_STATUS_REPAIR_INTERVAL_MS; at most REPAIRS_PER_RUN
   * per run, oldest first.
   */
  async repair(): Promise<{ reposted: number; forgotten: number }> {
    let reposted = 0;
    let forgotten = 0;
    const run = Date.now();
    const states = new Map<string, Awaited<ReturnType<MergeQueuesRepository['plannerState']>>>();
    for (const { member, score, repair } of await this.repairs.oldest(REPAIRS_PER_RUN)) {
      try {
        if (!states.has(repair.queueId)) {
          const queue = await this.outbox.queueForWorker(repair.queueId);
          states.set(repair.queueId, queue ? await this.repository.plannerState(queue.organizationId, queue.id) : null);
        }
        const state = states.get(repair.queueId);
        const status = state ? currentStatus(state, repair.subject, repair.sha) : undefined;
        if (status && state) {
          const subject = status.subject.kind === 'entry' ? `pr${status.subject.number}` : status.subject.batchId;
          await this.jobs.enqueue(
            { queueId: repair.queueId, revision: state.revision, status },
            `repair-${run}-${repair.queueId}-${state.revision}-${subject}-${status.sha}`,
          );
          reposted += 1;
        } else forgotten += 1;
        await this.repairs.forget(member, score);
      } catch (error) {
        this.logger.warn({ err: error, queueId: repair.queueId, sha: repair.sha }, 'a refused commit status could not be repaired in this run');
      }
    }
    if (reposted + forgotten > 0) this.logger.log({ reposted, forgotten }, 'merge-queue commit statuses repaired');
    return { reposted, forgotten };
  }

  /**
   * A batch landed by squash or rebase: its PRs' heads are not in the base, so GitHub will not mark
   * them merged. Each PR that added commits is closed, then told which commits landed (closing
   * first: a retry after a lost answer closes again, which changes nothing, and comments once the
   * close held). The commits are those the batch's prepare recorded for the candidate that landed;
   * a batch landed by merge commits is left to GitHub, which marks its PRs merged itself.
   */
  async closeLanded({ queueId, batchId, candidateSha }: CloseLandedJob): Promise<string> {
    const queue = await this.outbox.queueForWorker(queueId);
    if (!queue) return 'queue gone';
    const record = await this.outbox.landedCommits(queueId, batchRowId(queueId, batchId), candidateSha);
    if (!record || (record.method !== 'squash' && record.method !== 'rebase')) return 'merged by merge commits: GitHub marks the PRs merged';
    const git = await this.gits.forSource(queue.repository);
    if (!(git instanceof GitHubMergeQueueGit)) return 'not on GitHub';
    const closed: number[] = [];
    for (const pr of record.landed) {
      if (pr.commits.length === 0) continue;
      await git.closePullRequest(pr.number);
      await git.commentOnPullRequest(pr.number, landedNote(record.method, queue.baseRef, pr.commits));
      closed.push(pr.number);
    }
    return closed.length ? `closed #${closed.join(', #')}` : 'nothing to close';
  }

  post({ queueId, revision, status }: PostCommitStatusJob): Promise<string> {
    return this.ledger.inTurn(`${queueId}:${status.sha}:${status.subject.kind}`, revision, () => this.postNow(queueId, status));
  }

  private async postNow(queueId: string, status: PostCommitStatusJob['status']): Promise<string> {
    const queue = await this.outbox.queueForWorker(queueId);
    if (!queue) return 'queue gone';
    const git = await this.gits.forSource(queue.repository);
    if (!(git instanceof GitHubMergeQueueGit)) return 'not on GitHub';
    let targetUrl = `${this.config.git.publicUrl}/merge-queues/${queueId}`;
    if (status.ciBatchId) {
      const [batch] = await this.repository.batches(queue.organizationId, queueId, [batchRowId(queueId, status.ciBatchId)]);
      if (batch?.checksUrl) targetUrl = batch.checksUrl;
    }
    await git.createCommitStatus(status.sha, { state: status.state, context: `merge-queue/${queue.baseRef}`, description: status.description, targetUrl });
    return `${status.state}: ${status.description}`;
  }
}
