import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import type { GitHubPullRequests } from '@/modules/git-providers/github-pull-requests';
import { keepPaths, MergeQueuePaths } from '../changed-paths/changed-paths';
import { MergeQueueGits } from '../engine/gits';
import { MergeQueueWriter } from '../engine/queue-writer';
import { MergeQueueErrors } from '../merge-queues.errors';
import { MergeQueuesRepository } from '../merge-queues.repository';
import { FINAL_ENTRY_STATUSES, type MergeQueueState } from '../planner';
import { policyOf } from '../policy/queue-policy';
import { MAX_QUEUES_PER_DELIVERY, type ProviderEventResult, type ProviderEventTarget } from './provider-events';
import {
  decideEnqueue,
  dequeueReason,
  originOf,
  permissionRefusal,
  type PrRequest,
  queuesFor,
  refusalComment,
  type RequestQueue,
} from './pull-request-requests';

/** Failures that pass: the delivery's job is retried rather than the request answered. */
const TRANSIENT: readonly ProviderFailure['kind'][] = ['rate_limited', 'unavailable', 'timeout', 'unresolved'];

/** A PR request as the webhook gave it: a label (with its name) or a comment command (with the comment's id, for the reaction). */
export type PullRequestAsk = PrRequest & { commentId?: number };

/** What a request did, for the delivery's outcome. */
export interface PullRequestOutcome {
  results: ProviderEventResult[];
  /** Set when no queue of the repository takes the request (nothing was asked of GitHub). */
  ignored?: string;
}

/**
 * Enqueue and dequeue from the pull request (issue 39), on the worker: a label the queue names
 * (`enqueueLabel`) added or removed, or a `/queue` `/dequeue` comment (unless `commentCommands` is
 * off). GitHub is asked, in this order and only as far as needed: the person's permission (write,
 * maintain or admin), the PR (open, not a draft, its base one of the queues'), its review decision
 * (when the queue requires approval). An accepted enqueue queues the PR's head read then, with the
 * PR's title and an origin saying how and who; every refusal is answered with a comment on the PR,
 * an accepted command with a reaction. The change itself goes through the one writer, so a label and
 * a `/queue` for one PR, or one delivery applied twice, leave one entry.
 */
@Injectable()
export class MergeQueuePullRequestCommands {
  private readonly logger = new Logger(MergeQueuePullRequestCommands.name);

  constructor(
    private readonly writer: MergeQueueWriter,
    private readonly repository: MergeQueuesRepository,
    private readonly gits: MergeQueueGits,
    private readonly paths: MergeQueuePaths,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async requested(target: ProviderEventTarget, ask: PullRequestAsk): Promise<PullRequestOutcome> {
    const { organizationId, integrationId, repositoryId } = target;
    const rows = await this.repository.queuesOfRepository(organizationId, integrationId, repositoryId, { liveNumber: ask.number }, MAX_QUEUES_PER_DELIVERY);
    const queues = queuesFor(
      ask,
      rows.map((r) => ({ ...r, ...pick(policyOf(r.policy)) })),
    );
    if (queues.length === 0)
      return {
        results: [],
        ignored: ask.via === 'label' ? `the label ${ask.label} enqueues on no queue of the repository` : 'no queue of the repository takes comment commands',
      };
    const source = (await this.repository.find(organizationId, queues[0].id)).repository;
    const git = await this.gits.forSource(source);
    if (!(git instanceof GitHubMergeQueueGit)) return { results: [], ignored: 'the repository is not on GitHub' };
    const prs = git.pullRequests();
    const note = (queueId: string, applied: boolean, text: string): PullRequestOutcome => ({ results: [{ queueId, applied, note: text }] });
    const refuse = async (why: string, queueId = queues[0].id): Promise<PullRequestOutcome> => {
      await this.answer(prs, ask.number, refusalComment(ask, why));
      return note(queueId, false, `#${ask.number} refused (${ask.via} by @${ask.login}): ${why}`);
    };
    try {
      const permission = await prs.permission(ask.login);
      const noWrite = permissionRefusal(ask.login, permission.canWrite, permission.permission, source.nameWithOwner);
      if (noWrite) return await refuse(noWrite);
      if (ask.action === 'dequeue') return await this.dequeue(target, ask, queues, rows, prs, refuse);
      const pull = await prs.pull(ask.number);
      const needsReview = pull !== null && queues.some((q) => q.baseRef === pull.baseRef && q.requireApproval);
      const review = needsReview ? await git.reviewDecision(ask.number) : undefined;
      const decision = decideEnqueue(queues, { pull, review });
      if (!decision.accepted) return await refuse(decision.why);
      return await this.enqueue(target, ask, decision.queue, pull!, prs, refuse);
    } catch (error) {
      // GitHub down, slow or rate limiting: the job is retried (its backoff), the delivery stays unapplied until then.
      if (!(error instanceof ProviderFailure) || TRANSIENT.includes(error.kind)) throw error;
      // GitHub refused the app (a permission the installation lacks...): said on the PR, so the person knows.
      return refuse(`GitHub refused to answer the merge queue (${error.reason}); try again once the app's access is fixed`);
    }
  }

  private async enqueue(
    { organizationId, source: from }: ProviderEventTarget,
    ask: PullRequestAsk,
    queue: RequestQueue,
    pull: { headSha: string; title: string; htmlUrl: string },
    prs: GitHubPullRequests,
    refuse: (why: string, queueId?: string) => Promise<PullRequestOutcome>,
  ): Promise<PullRequestOutcome> {
    const entryId = randomUUID();
    const origin = originOf(ask);
    let already = false;
    try {
      const { outcome, result } = await this.writer.apply({
        organizationId,
        queueId: queue.id,
        build: async (_locked, q) => {
          const limit = this.config.mergeQueues.maxLiveEntries;
          const { duplicateId, live } = await q.liveEntries(ask.number, limit);
          if (duplicateId) {
            already = true;
            return [];
          }
          if (live >= limit) throw new AppError(MergeQueueErrors.ENTRY_LIMIT_REACHED, { metadata: { limit } });
          return [{ type: 'enqueue', at: Date.now(), entry: { id: entryId, number: ask.number, headSha: pull.headSha, url: pull.htmlUrl, title: pull.title } }];
        },
        quietWhenUnchanged: true,
        detail: { origin, source: from.provider, deliveryId: from.deliveryId, providerEvent: from.event },
        after: async (q, { row }, applied) => {
          if (!applied.changed) return { askLater: false };
          await q.setEntryOrigin(entryId, origin);
          await q.setTitleSource(entryId, 'github');
          return keepPaths(q, row, entryId, pull.headSha, undefined);
        },
      });
      if (result.askLater) await this.paths.ask(queue.id, entryId);
      await this.acknowledge(prs, ask, 'rocket');
      if (already || !outcome.changed) return { results: [{ queueId: queue.id, applied: false, note: `#${ask.number} is already in the queue` }] };
      return { results: [{ queueId: queue.id, applied: true, note: `#${ask.number} queued with head ${pull.headSha} (${ask.via} by @${ask.login})` }] };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Another request for the PR won the lock meanwhile: one entry.
      if (error.entry.code === MergeQueueErrors.ENTRY_EXISTS.code)
        return { results: [{ queueId: queue.id, applied: false, note: `#${ask.number} is already in the queue` }] };
      return refuse(error.message.replace(/\.$/, ''), queue.id);
    }
  }

  private async dequeue(
    { organizationId, source: from }: ProviderEventTarget,
    ask: PullRequestAsk,
    queues: readonly RequestQueue[],
    rows: readonly { id: string; concerned: boolean }[],
    prs: GitHubPullRequests,
    refuse: (why: string, queueId?: string) => Promise<PullRequestOutcome>,
  ): Promise<PullRequestOutcome> {
    const holding = queues.filter((q) => rows.find((r) => r.id === q.id)?.concerned);
    if (holding.length === 0) {
      // A label removed from a PR that is not queued (it was refused, or has left) asks nothing.
      if (ask.via === 'label') return { results: queues.map((q) => ({ queueId: q.id, applied: false, note: `#${ask.number} is not in the queue` })) };
      return refuse('it is not in the queue');
    }
    const results: ProviderEventResult[] = [];
    for (const queue of holding) {
      const { outcome } = await this.writer.apply({
        organizationId,
        queueId: queue.id,
        numbers: [ask.number],
        build: ({ state }) => {
          const entry = liveEntry(state, ask.number);
          return entry ? [{ type: 'remove', entryId: entry.id, reason: dequeueReason(ask), at: Date.now() }] : [];
        },
        quietWhenUnchanged: true,
        detail: { origin: originOf(ask), source: from.provider, deliveryId: from.deliveryId, providerEvent: from.event },
      });
      results.push({
        queueId: queue.id,
        applied: outcome.changed,
        note: outcome.changed ? `#${ask.number} ${dequeueReason(ask)}` : `#${ask.number} is not in the queue`,
      });
    }
    await this.acknowledge(prs, ask, '+1');
    return { results };
  }

  /** An accepted comment command gets a reaction on the comment (a label shows itself, and the queue's status follows). */
  private async acknowledge(prs: GitHubPullRequests, ask: PullRequestAsk, content: 'rocket' | '+1'): Promise<void> {
    if (ask.via !== 'comment' || ask.commentId === undefined) return;
    await prs.react(ask.commentId, content).catch((error: Error) => this.logger.warn(`#${ask.number}: the reaction could not be given (${error.message})`));
  }

  /** A comment on the PR; a failure to post it is logged (the decision stands, and the delivery's outcome says it). */
  private async answer(prs: GitHubPullRequests, number: number, body: string): Promise<void> {
    await prs.comment(number, body).catch((error: Error) => this.logger.warn(`#${number}: the answer could not be posted (${error.message})`));
  }
}

function pick(policy: ReturnType<typeof policyOf>): Omit<RequestQueue, 'id' | 'baseRef'> {
  return { enqueueLabel: policy.enqueueLabel, commentCommands: policy.commentCommands, requireApproval: policy.requireApproval };
}

function liveEntry(state: MergeQueueState, number: number) {
  return state.entries.find((e) => e.number === number && !FINAL_ENTRY_STATUSES.includes(e.status));
}
