import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import type { JobQueue } from '@/common/queues/job-handlers';
import { MergeQueuesJob, QueueName } from '@/common/queues/queue-names';
import type { MergeQueue } from '@/generated/prisma/client';
import { MergeQueueGits } from '../engine/gits';
import { MergeQueueWriter } from '../engine/queue-writer';
import { MergeQueueErrors } from '../merge-queues.errors';
import type { MergeQueuesPayloads } from '../engine/jobs';
import { MergeQueueOutboxRepository } from '../engine/store/outbox.repository';
import type { QueueTransaction } from '../engine/store/queue-transaction';
import type { EntryView, QueueWithSource } from '../engine/store/queue-view';
import { type ChangedPaths, knownLanes, type LanesVerdict, type MergeQueueEvent, type MergeQueueState, type PathGroup, pathGroupsOf } from '../planner';
import { PathMatching } from './path-matching';
import { PathsAsks } from './paths-asks';
import { MergeQueuePathsRepository } from './paths.repository';

/** A PR's changed paths as the provider listed them, and its lanes under `groups` (matched outside the queue's lock). */
export interface AskedPaths {
  paths: ChangedPaths;
  groups: PathGroup[];
  verdict: LanesVerdict;
}

/** The `key` of the paths sweep's jobs (ask). */
export const PATHS_SWEEP_KEY = 'sweep';

/**
 * A PR's changed paths from the provider, for its lanes (planner/lanes.ts): asked when the queue
 * has path groups, before the queue's lock is taken (a provider call never holds it). The base is
 * the one the planner builds on; the diff is from its merge base with the head, so what the base
 * gained since the PR branched is not counted.
 */
@Injectable()
export class MergeQueuePaths {
  private readonly logger = new Logger(MergeQueuePaths.name);

  constructor(
    private readonly gits: MergeQueueGits,
    private readonly outbox: MergeQueueOutboxRepository,
    private readonly repository: MergeQueuePathsRepository,
    private readonly asks: PathsAsks,
    private readonly matching: PathMatching,
    private readonly writer: MergeQueueWriter,
    @InjectQueue(QueueName.MergeQueues) private readonly queue: JobQueue<MergeQueuesPayloads>,
  ) {}

  /**
   * The paths (null: not known) and the lanes they touch under the queue's groups as read (matched
   * by PathMatching: never a stall), or undefined when the queue has no path groups (nothing
   * asked). Provider failures propagate.
   */
  async of(queue: QueueWithSource, headSha: string): Promise<AskedPaths | undefined> {
    const groups = pathGroupsOf(queue);
    if (groups.length === 0) return undefined;
    const paths = await this.list(queue, headSha);
    return { paths, groups, verdict: await this.matching.lanes(groups, paths) };
  }

  private async list(queue: QueueWithSource, headSha: string): Promise<ChangedPaths> {
    const git = await this.gits.forSource(queue.repository);
    const baseSha = (queue.plannerState as MergeQueueState | null)?.baseSha ?? (await git.readRef(queue.baseRef));
    return baseSha ? git.changedPaths(baseSha, headSha) : null;
  }

  /**
   * The worker's job after path groups were set or changed (MergeQueuesJob.AskPaths), and after an
   * entry was queued without its lanes matched: for every live entry whose lanes were not matched for
   * the head it is to be tested with under the queue's groups, one after the other outside the
   * queue's lock (reporting progress), takes the paths its row keeps for that head, or asks the
   * provider when it keeps none (never asked, or more than an entry keeps), matches them
   * (PathMatching: a deadline per entry), then keeps them under the lock with the planner's
   * `entryLanes` (`keep`: only while the queue still has these groups; "not known" is kept too, so
   * a PR of 300 files or more is not asked again). A provider that fails
   * stops the run with what it asked so far kept; BullMQ retries the job for the rest.
   */
  async fill(queueId: string, progress: (done: number, of: number) => Promise<void> = async () => {}): Promise<{ asked: number; kept: number }> {
    const queue = await this.outbox.queueForWorker(queueId);
    const groups = queue ? pathGroupsOf(queue) : [];
    if (!queue || groups.length === 0) return { asked: 0, kept: 0 };
    const entries = await this.repository.entriesWithoutLanes(queueId, MAX_ASKED_PER_RUN);
    const asked: AskedForEntry[] = [];
    let failure: unknown;
    let listed = 0;
    for (const [i, entry] of entries.entries()) {
      let paths: ChangedPaths;
      try {
        if (entry.current && entry.pathsCount === null) paths = null;
        else {
          const kept = entry.current ? await this.repository.keptPaths(entry.id) : null;
          if (kept) paths = kept;
          else {
            listed++;
            paths = await this.list(queue, entry.head);
          }
        }
      } catch (error) {
        failure = error;
        break;
      }
      asked.push({ id: entry.id, head: entry.head, paths, verdict: await this.matching.lanes(groups, paths) });
      await progress(i + 1, entries.length);
    }
    const kept = asked.length ? await this.keep(queueId, groups, asked) : 0;
    this.logger.log({ queueId, entries: entries.length, asked: asked.length, listed, kept }, 'merge-queue changed paths asked');
    if (failure) throw failure;
    return { asked: asked.length, kept };
  }

  /**
   * Keeps what `fill` asked, through the queue's one writer, KEPT_PER_EVENT entries a transaction:
   * under the queue's lock, only while the queue still has the `groups` they were matched under (a
   * change of groups scheduled its own job: nothing is kept, and the rest is left to it), each
   * entry's `entryLanes` for the planner (when its paths were known) and its row's paths and lanes
   * (QueueTransaction.keepAskedPaths), together or not at all. Returns how many rows took them.
   */
  private async keep(queueId: string, groups: PathGroup[], asked: readonly AskedForEntry[]): Promise<number> {
    let kept = 0;
    for (let from = 0; from < asked.length; from += KEPT_PER_EVENT) {
      const part = asked.slice(from, from + KEPT_PER_EVENT);
      let same = false;
      const applied = await this.writer
        .apply({
          organizationId: null,
          queueId,
          build: ({ row }) => {
            same = JSON.stringify(pathGroupsOf(row)) === JSON.stringify(groups);
            const at = Date.now();
            return same ? part.flatMap((entry) => lanesEvents(row, entry.id, entry.head, { groups, verdict: entry.verdict }, at)) : [];
          },
          quietWhenUnchanged: true,
          detail: { source: 'changedPaths' },
          after: async (q) => (same ? q.keepAskedPaths(part) : 0),
        })
        .catch((error: unknown) => {
          // The queue was deleted meanwhile: nothing to keep.
          if (error instanceof AppError && error.entry.code === MergeQueueErrors.NOT_FOUND.code) return null;
          throw error;
        });
      if (applied === null || !same) break;
      kept += applied.result;
    }
    return kept;
  }

  /**
   * Asks, in the worker, the changed paths of the queue's live entries that have none kept (path
   * groups were just set, or a provider call for them failed). One job per request (`key`: the
   * queue's revision, the entry, the delivery; `sweep` for the paths sweep, so it never holds two for
   * one queue); a lost one (Redis down) leaves those entries in every lane until the worker's paths
   * sweep finds them (MergeQueuesProcessor.sweepPaths), which leaves the queue alone while a job is
   * on its way (PathsAsks). The sweep's own job is tried once: the next sweep is its retry.
   */
  async ask(queueId: string, key: string): Promise<void> {
    // Claimed first: a quick job may have finished (and dropped the claim) before a claim taken after it.
    await this.asks.claim(queueId);
    try {
      await this.queue.add(
        MergeQueuesJob.AskPaths,
        { queueId },
        {
          jobId: `paths-${queueId}-${key}`,
          ...(key === PATHS_SWEEP_KEY ? { attempts: 1 } : { attempts: 3, backoff: { type: 'exponential', delay: 2_000 } }),
          removeOnComplete: true,
          removeOnFail: true,
        },
      );
    } catch (error) {
      this.logger.warn({ err: error, queueId }, 'merge-queue changed paths not asked; entries without kept paths stay in every lane');
    }
  }
}

/** One run asks at most this many entries (the most a queue holds by default). */
const MAX_ASKED_PER_RUN = 5_000;
/** What one run keeps in one transaction of the writer (one `entryLanes` event each). */
const KEPT_PER_EVENT = 100;

/** An entry's paths as `fill` asked them for `head`, and their lanes under the groups it read. */
export interface AskedForEntry {
  id: string;
  head: string;
  paths: ChangedPaths;
  verdict: LanesVerdict;
}

/**
 * Under the queue's lock, an entry's paths (asked for `head`) and lanes. The lanes matched outside
 * the lock count only if the locked row holds the groups they were matched under; otherwise (the
 * groups changed meanwhile) the entry is in every lane and the worker matches them again
 * (`askLater`). Undefined paths were not asked (the queue had no groups when read) or the asking
 * failed: with groups now, the entry is in every lane and the worker is to ask them.
 */
export async function keepPaths(
  q: QueueTransaction,
  row: MergeQueue,
  entryId: string,
  head: string,
  asked: AskedPaths | undefined,
): Promise<{ entry?: EntryView; askLater: boolean }> {
  const groups = pathGroupsOf(row);
  if (asked !== undefined) {
    const same = JSON.stringify(asked.groups) === JSON.stringify(groups);
    return { entry: await q.setEntryPaths(entryId, head, asked.paths, groups, same ? asked.verdict : null), askLater: !same && groups.length > 0 };
  }
  if (groups.length === 0) return { askLater: false };
  return { entry: await q.setEntryPaths(entryId, null, null, groups, null), askLater: true };
}

/**
 * The planner's `entryLanes` event for lanes matched outside the lock (`asked`, for `head`): sent
 * with the event that moved the entry's head (or on its own), in the same transaction as the row's
 * lanes (keepPaths, keepAskedPaths), when the locked row still holds the groups they were matched
 * under and the paths were known (planner knownLanes). None otherwise: the planner's lanes of the
 * entry stay not known (absent) until an answer for its head is.
 */
export function lanesEvents(
  row: Pick<MergeQueue, 'settings'>,
  entryId: string,
  head: string,
  asked: Pick<AskedPaths, 'groups' | 'verdict'> | undefined,
  at = Date.now(),
): MergeQueueEvent[] {
  if (asked === undefined) return [];
  const groups = pathGroupsOf(row);
  if (groups.length === 0 || JSON.stringify(asked.groups) !== JSON.stringify(groups)) return [];
  const lanes = knownLanes(asked.verdict);
  return lanes === null ? [] : [{ type: 'entryLanes', entryId, headSha: head, lanes, at }];
}
