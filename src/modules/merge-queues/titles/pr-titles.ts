import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { JobQueue } from '@/common/queues/job-handlers';
import { MergeQueuesJob, QueueName } from '@/common/queues/queue-names';
import type { CodeSource } from '@/generated/prisma/client';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import { MergeQueueGits } from '../engine/gits';
import type { MergeQueuesPayloads } from '../engine/jobs';
import { MergeQueueWriter } from '../engine/queue-writer';
import { MergeQueueOutboxRepository } from '../engine/store/outbox.repository';
import type { QueueTransaction } from '../engine/store/queue-transaction';
import type { MergeQueueState } from '../planner';

/** The longest title an entry keeps (as POST .../entries takes it); GitHub's own limit is lower. */
export const MAX_TITLE_LENGTH = 500;

/** How often the worker tries to read a title (exponential backoff from 2 s: about a minute in all). */
const READ_ATTEMPTS = 5;

/**
 * PR titles from GitHub. On a GitHub queue an entry's title is the PR's title as GitHub has it:
 * the worker reads it after an API enqueue (`ask`, then the job calls `read`), and a
 * `pull_request edited` webhook that changed it applies the new one (MergeQueueProviderEvents).
 * Until GitHub's is read the title the caller gave is shown; GitHub's wins once read. Other
 * providers keep the title as given. A title is applied through the writer (`titleChanged`, under
 * the queue's lock); GitHub is never asked under it, and an enqueue never waits for it.
 */
@Injectable()
export class MergeQueueTitles {
  private readonly logger = new Logger(MergeQueueTitles.name);

  constructor(
    private readonly gits: MergeQueueGits,
    private readonly writer: MergeQueueWriter,
    private readonly outbox: MergeQueueOutboxRepository,
    @InjectQueue(QueueName.MergeQueues) private readonly queue: JobQueue<MergeQueuesPayloads>,
  ) {}

  /** Whether titles of this code source's PRs come from GitHub. */
  static fromGitHub(source: Pick<CodeSource, 'provider'>): boolean {
    return source.provider === 'GITHUB' || source.provider === 'GITHUB_ENTERPRISE';
  }

  /**
   * PR `number`'s title as GitHub has it, through the code source's integration (the real Octokit
   * client), cut to MAX_TITLE_LENGTH; null when the code source is not on GitHub or GitHub knows no
   * such PR. Provider failures propagate (ProviderFailure). Usable by any enqueue that reads the PR.
   */
  async githubTitle(source: CodeSource, number: number): Promise<string | null> {
    if (!MergeQueueTitles.fromGitHub(source)) return null;
    const git = await this.gits.forSource(source);
    if (!(git instanceof GitHubMergeQueueGit)) return null;
    const title = await git.pullRequestTitle(number);
    return title === null ? null : title.slice(0, MAX_TITLE_LENGTH);
  }

  /**
   * Has the worker read the title of PR `number` (entry `entryId`) from GitHub. Never fails: a job
   * that cannot be added (Redis down) is logged, and the entry keeps the title it was given.
   */
  async ask(queueId: string, entryId: string, number: number): Promise<void> {
    try {
      await this.queue.add(
        MergeQueuesJob.ReadTitle,
        { queueId, entryId, number },
        { jobId: `title-${entryId}`, attempts: READ_ATTEMPTS, backoff: { type: 'exponential', delay: 2_000 }, removeOnComplete: true, removeOnFail: true },
      );
    } catch (error) {
      this.logger.warn({ err: error, queueId, entryId }, 'merge-queue PR title not asked; the entry keeps the title it was given');
    }
  }

  /** The worker's job (MergeQueuesJob.ReadTitle): reads the title from GitHub and applies it. Provider failures propagate (BullMQ retries). */
  async read({ queueId, entryId, number }: { queueId: string; entryId: string; number: number }): Promise<string> {
    const queue = await this.outbox.queueForWorker(queueId);
    if (!queue) return 'no such queue';
    if (!MergeQueueTitles.fromGitHub(queue.repository)) return 'not a GitHub queue: the title stays as given';
    const title = await this.githubTitle(queue.repository, number);
    if (title === null) return `GitHub knows no pull request #${number}: the title stays as given`;
    const applied = await this.apply(null, queueId, entryId, title);
    return applied ? 'title read from GitHub' : 'the entry is no longer in the queue';
  }

  /**
   * Applies GitHub's title to a live entry, as a `titleChanged` event under the queue's lock (quiet
   * when the title is already that), and records that it came from GitHub. False when the entry is
   * not live (a final entry keeps its title).
   */
  async apply(organizationId: string | null, queueId: string, entryId: string, title: string): Promise<boolean> {
    const { result } = await this.writer.apply({
      organizationId,
      queueId,
      build: () => [{ type: 'titleChanged', entryId, title, at: Date.now() }],
      quietWhenUnchanged: true,
      detail: { source: 'github' },
      after: (q, { state }) => markGitHubTitle(q, state, entryId, title),
    });
    return result;
  }
}

/**
 * Inside an event's transaction: when the entry holds `title` now, records that the title is
 * GitHub's (`titleSource`); returns whether it does.
 */
export async function markGitHubTitle(q: QueueTransaction, state: MergeQueueState, entryId: string, title: string): Promise<boolean> {
  const entry = state.entries.find((e) => e.id === entryId);
  if (entry?.title !== title) return false;
  await q.setTitleSource(entryId, 'github');
  return true;
}
