import { Injectable, Logger } from '@nestjs/common';
import { type AskedPaths, keepPaths, MergeQueuePaths } from '../changed-paths/changed-paths';
import { batchRowId } from '../engine/ids';
import { MergeQueueWriter } from '../engine/queue-writer';
import { MergeQueuesRepository } from '../merge-queues.repository';
import { FINAL_BATCH_STATUSES, FINAL_ENTRY_STATUSES, type MergeQueueEvent, type MergeQueueState, pathGroupsOf } from '../planner';

/** Where a provider event came from, for the queue's event trail. */
export interface ProviderSource {
  provider: 'github';
  deliveryId: string;
  event: string;
}

/**
 * Which queues a provider event concerns: the repository's (`owner/name`) in the organization,
 * connected through the integration the delivery was verified for; and where it came from.
 */
export interface ProviderEventTarget {
  organizationId: string;
  integrationId: string;
  repository: string;
  source: ProviderSource;
}

/** What one provider event did to one queue. */
export interface ProviderEventResult {
  queueId: string;
  applied: boolean;
  note: string;
}

/**
 * Provider events (GitHub webhooks) as the planner's existing events, through the one writer
 * (MergeQueueWriter.apply): a PR's new head is `headUpdated`, a closed PR `remove`, a check
 * result on a candidate commit `checkReported` (exactly what POST .../checks applies, bound to the
 * candidate sha), a push to the base from outside the queue `baseMoved`. Each method looks at every
 * queue of the repository in the organization (through the integration the delivery was verified
 * for) and changes only those it concerns; the planner ignores what no longer applies, so applying
 * the same delivery twice changes nothing the second time.
 */
@Injectable()
export class MergeQueueProviderEvents {
  private readonly logger = new Logger(MergeQueueProviderEvents.name);

  constructor(
    private readonly writer: MergeQueueWriter,
    private readonly repository: MergeQueuesRepository,
    private readonly paths: MergeQueuePaths,
  ) {}

  /**
   * A PR got a new head commit: its batch (if any) is withdrawn and it is queued again with the new
   * head; on a queue with path groups its changed paths and lanes are asked again.
   */
  prHeadChanged(target: ProviderEventTarget, number: number, headSha: string): Promise<ProviderEventResult[]> {
    return this.each(
      target,
      [number],
      (state) => {
        const entry = liveEntry(state, number);
        if (!entry) return { events: [], note: `#${number} is not in the queue` };
        if (entry.headSha === headSha && entry.pendingHeadSha === null) return { events: [], note: `#${number} already has head ${headSha}` };
        return {
          events: [{ type: 'headUpdated', entryId: entry.id, headSha, at: Date.now() }],
          note: `#${number} has a new head ${headSha}`,
          entryId: entry.id,
        };
      },
      { headSha },
    );
  }

  /** A PR was closed (merged outside the queue or not): it leaves the queue. */
  prClosed(target: ProviderEventTarget, number: number): Promise<ProviderEventResult[]> {
    return this.each(target, [number], (state) => {
      const entry = liveEntry(state, number);
      if (!entry) return { events: [], note: `#${number} is not in the queue` };
      return { events: [{ type: 'remove', entryId: entry.id, at: Date.now() }], note: `#${number} was closed` };
    });
  }

  /**
   * A check result on a commit: recorded for the live batch whose candidate is that commit, when
   * the check is one the queue requires; a result for any other commit (a PR head, a withdrawn
   * candidate) changes nothing.
   */
  checkCompleted(
    target: ProviderEventTarget,
    check: { sha: string; name: string; state: 'success' | 'failure'; url?: string },
  ): Promise<ProviderEventResult[]> {
    return this.each(
      target,
      [],
      (state) => {
        const batch = state.batches.find((b) => b.candidateSha === check.sha && !FINAL_BATCH_STATUSES.includes(b.status));
        if (!batch) return { events: [], note: `${check.sha} is no live candidate` };
        if (!state.config.requiredChecks.includes(check.name)) return { events: [], note: `${check.name} is not a required check` };
        return {
          events: [{ type: 'checkReported', batchId: batch.id, candidateSha: check.sha, name: check.name, state: check.state, at: Date.now() }],
          note: `${check.name} ${check.state} on ${check.sha}`,
          batchId: batch.id,
        };
      },
      { checksUrl: check.url },
    );
  }

  /**
   * The base branch moved. The queue's own land (its candidate, or the base it already knows) is
   * nothing new; while a land is in flight the land's compare-and-swap finds out itself; otherwise
   * the queue re-plans on the new base (`baseMoved`: batches built on the old one go stale).
   */
  basePushed(target: ProviderEventTarget, branch: string, after: string): Promise<ProviderEventResult[]> {
    return this.each(
      target,
      [],
      (state) => {
        if (state.baseSha === after) return { events: [], note: 'the base the queue already knows' };
        if (state.batches.some((b) => b.candidateSha === after)) return { events: [], note: `${after} is a candidate of the queue (its own land)` };
        if (state.batches.some((b) => b.status === 'merging' || b.status === 'reconciling'))
          return { events: [], note: 'a land is in flight; its compare-and-swap reads the base' };
        return { events: [{ type: 'baseMoved', baseSha: after, at: Date.now() }], note: `the base moved to ${after} from outside the queue` };
      },
      { baseRef: branch },
    );
  }

  private async each(
    { organizationId, integrationId, repository, source }: ProviderEventTarget,
    numbers: readonly number[],
    decide: (state: MergeQueueState) => { events: MergeQueueEvent[]; note: string; batchId?: string; entryId?: string },
    options: { checksUrl?: string; baseRef?: string; headSha?: string } = {},
  ): Promise<ProviderEventResult[]> {
    const { checksUrl, baseRef, headSha } = options;
    const results: ProviderEventResult[] = [];
    for (const queue of await this.repository.queuesOfRepository(organizationId, integrationId, repository)) {
      if (baseRef !== undefined && queue.baseRef !== baseRef) continue;
      // Asked only on a queue with path groups and for a PR it holds: a push to any other PR costs no provider call.
      const asks = headSha !== undefined && pathGroupsOf(queue).length > 0 && (await this.repository.hasLiveEntry(organizationId, queue.id, numbers[0]));
      const paths = asks ? await this.pathsOf(organizationId, queue.id, headSha) : undefined;
      let note = '';
      let batchId: string | undefined;
      let entryId: string | undefined;
      let askLater = false;
      const { outcome } = await this.writer.apply({
        organizationId,
        queueId: queue.id,
        // decide() finds the PR's live entry by number in the state (a window loads it), and the batches.
        numbers,
        build: ({ state }) => {
          const decided = decide(state);
          note = decided.note;
          batchId = decided.batchId;
          entryId = decided.entryId;
          return decided.events;
        },
        quietWhenUnchanged: true,
        detail: { source: source.provider, deliveryId: source.deliveryId, providerEvent: source.event },
        after: async (q, { row }, applied) => {
          if (checksUrl !== undefined && batchId !== undefined && applied.changed) await q.setChecksUrl(batchRowId(row.id, batchId), checksUrl);
          if (entryId === undefined || headSha === undefined || !applied.changed || pathGroupsOf(row).length === 0) return;
          // Not asked or not answered: in every lane until the worker asks them.
          ({ askLater } = await keepPaths(q, row, entryId, headSha, paths === 'failed' ? undefined : paths));
        },
      });
      if (askLater) await this.paths.ask(queue.id, `${source.deliveryId}`);
      results.push({ queueId: queue.id, applied: outcome.changed, note });
    }
    return results;
  }

  /**
   * The new head's changed paths on a queue with path groups. Anything that fails (the provider, the
   * integration, git) is 'failed': the PR is in every lane and the worker asks again (MergeQueuePaths.ask). The
   * head update itself never fails on a listing of paths.
   */
  private async pathsOf(organizationId: string, queueId: string, headSha: string): Promise<AskedPaths | undefined | 'failed'> {
    try {
      return await this.paths.of(await this.repository.find(organizationId, queueId), headSha);
    } catch (error) {
      this.logger.warn(
        `merge queue ${queueId}: the changed paths of ${headSha} could not be listed (${(error as Error).message}); the PR is in every lane until the worker asks again`,
      );
      return 'failed';
    }
  }
}

function liveEntry(state: MergeQueueState, number: number) {
  return state.entries.find((e) => e.number === number && !FINAL_ENTRY_STATUSES.includes(e.status));
}
