import { Injectable, Logger } from '@nestjs/common';
import { GitHubMergeQueueGit } from '@/modules/git-providers/github-merge-queue-git';
import { type AskedPaths, keepPaths, lanesEvents, MergeQueuePaths } from '../changed-paths/changed-paths';
import { MergeQueueGits } from '../engine/gits';
import { batchRowId } from '../engine/ids';
import { MergeQueueWriter } from '../engine/queue-writer';
import { MAX_FAILURE_FILE_LENGTH, MAX_FAILURE_TEST_LENGTH } from '../dto/merge-queue.dto';
import { MergeQueuesRepository, type QueueConcern } from '../merge-queues.repository';
import { FINAL_BATCH_STATUSES, FINAL_ENTRY_STATUSES, type MergeQueueEvent, type MergeQueueState, pathGroupsOf } from '../planner';
import { countCheck, policyOf, type QueuePolicy, type ReportedCheckSource } from '../policy/queue-policy';
import { markGitHubTitle, MAX_TITLE_LENGTH } from '../titles/pr-titles';

/** The reason a push removes a PR (its `block`; its commit status reads "Removed: <reason>"). */
export const PUSHED_REASON = 'new commits were pushed';

/** Where a provider event came from, for the queue's event trail. */
export interface ProviderSource {
  provider: 'github';
  deliveryId: string;
  event: string;
}

/**
 * Which queues a provider event concerns: the repository's in the organization, connected through
 * the integration the delivery was verified for, found by the provider's id of the repository
 * (`repositoryId`, a code source's `foreignId`: a rename or transfer keeps it; `repository` is the
 * name the delivery gives, for the record); and where it came from.
 */
export interface ProviderEventTarget {
  organizationId: string;
  integrationId: string;
  repository: string;
  repositoryId: string;
  source: ProviderSource;
}

/**
 * The most queues one delivery locks and changes (each is one locked transaction on the shared
 * worker). Only the queues an event concerns are locked, found first without a lock: a push, the
 * queue of that base (at most two: one moving there); a check, the queue whose live batch has that
 * candidate; a PR, the queues it is live in. Queues it does not concern get their note unlocked.
 */
export const MAX_QUEUES_PER_DELIVERY = 10;

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
    private readonly gits: MergeQueueGits,
  ) {}

  /**
   * A PR got a new head commit (a push). The old head never lands: its batch is withdrawn (a land
   * no executor has started included, `stopLand`; one already started is the provider's to finish).
   * By the queue's `onHeadPush`: `remove` (the default) removes the PR with the reason, leaving with
   * the pushed head so its commit status shows on the PR; `requeueIfApproved` queues it again with
   * the new head only when GitHub's review decision on that head is APPROVED (asked before the
   * queue's lock), else removes it. On a queue with path groups a re-queued PR's paths are asked again.
   */
  prHeadChanged(target: ProviderEventTarget, number: number, headSha: string): Promise<ProviderEventResult[]> {
    return this.each(
      target,
      [number],
      (state, { approval }) => {
        const entry = liveEntry(state, number);
        if (!entry) return { events: [], note: `#${number} is not in the queue` };
        if (entry.headSha === headSha && entry.pendingHeadSha === null) return { events: [], note: `#${number} already has head ${headSha}` };
        if (approval?.approved) {
          return {
            events: [{ type: 'headUpdated', entryId: entry.id, headSha, stopLand: true, at: Date.now() }],
            note: `#${number} has a new head ${headSha}, approved: queued again`,
            entryId: entry.id,
          };
        }
        const why = approval ? ` (${approval.why})` : '';
        return {
          events: [{ type: 'remove', entryId: entry.id, reason: PUSHED_REASON, headSha, stopLand: true, at: Date.now() }],
          note: `#${number} was removed: ${PUSHED_REASON}${why}`,
          detail: { reason: `${PUSHED_REASON}${why}` },
        };
      },
      { headSha, number, concerns: { liveNumber: number }, unconcerned: `#${number} is not in the queue` },
    );
  }

  /** A PR was closed (merged outside the queue or not): it leaves the queue. */
  prClosed(target: ProviderEventTarget, number: number): Promise<ProviderEventResult[]> {
    return this.each(
      target,
      [number],
      (state) => {
        const entry = liveEntry(state, number);
        if (!entry) return { events: [], note: `#${number} is not in the queue` };
        return { events: [{ type: 'remove', entryId: entry.id, at: Date.now() }], note: `#${number} was closed` };
      },
      { concerns: { liveNumber: number }, unconcerned: `#${number} is not in the queue` },
    );
  }

  /**
   * A PR's title was edited on GitHub: the live entry takes it (`titleChanged`; GitHub's title wins
   * over one an API caller gave), recorded as GitHub's. The same title again changes nothing.
   */
  prTitleChanged(target: ProviderEventTarget, number: number, title: string): Promise<ProviderEventResult[]> {
    const kept = title.slice(0, MAX_TITLE_LENGTH);
    return this.each(
      target,
      [number],
      (state) => {
        const entry = liveEntry(state, number);
        if (!entry) return { events: [], note: `#${number} is not in the queue` };
        return {
          events: [{ type: 'titleChanged', entryId: entry.id, title: kept, at: Date.now() }],
          note: entry.title === kept ? `#${number} already has that title` : `#${number} has a new title`,
          entryId: entry.id,
        };
      },
      { concerns: { liveNumber: number }, unconcerned: `#${number} is not in the queue`, title: kept },
    );
  }

  /**
   * A check result on a commit: recorded for the live batch whose candidate is that commit, when
   * the check is one the queue requires and the result comes from the source the queue takes for
   * it (policy/queue-policy.ts countCheck). A result from another source, or skipped where that is
   * no pass, is noted on the batch and in the events and changes no check (the check timeout
   * names it). A result for any other commit (a PR head, a withdrawn candidate) changes nothing.
   */
  checkCompleted(
    target: ProviderEventTarget,
    check: {
      sha: string;
      name: string;
      state: 'success' | 'failure';
      url?: string;
      source?: ReportedCheckSource;
      skipped?: boolean;
      checkRun?: { id: number; annotations: number; title?: string };
    },
    options: { retryReads?: boolean } = {},
  ): Promise<ProviderEventResult[]> {
    // A parser that names no source is a check run of an unnamed app.
    const source: ReportedCheckSource = check.source ?? { kind: 'checkRun' };
    // A failing check run's failing tests, read once (for the first queue it concerns) before any lock.
    let read: Promise<FailuresRead> | undefined;
    const run = check.state === 'failure' ? check.checkRun : undefined;
    const evidence = run ? (queueId: string) => (read ??= this.checkRunFailures(target.organizationId, queueId, run, options.retryReads === true)) : undefined;
    return this.each(
      target,
      [],
      (state, { policy, evidence: found }) => {
        const batch = state.batches.find((b) => b.candidateSha === check.sha && !FINAL_BATCH_STATUSES.includes(b.status));
        if (!batch) return { events: [], note: `${check.sha} is no live candidate` };
        if (!state.config.requiredChecks.includes(check.name)) return { events: [], note: `${check.name} is not a required check` };
        const counted = countCheck(policy, { name: check.name, state: check.state, source, skipped: check.skipped });
        const from = sourceDetail(source);
        if (!counted.counts) {
          return {
            events: [
              {
                type: 'checkReported',
                batchId: batch.id,
                candidateSha: check.sha,
                name: check.name,
                state: 'pending',
                notCounted: counted.why,
                at: Date.now(),
              },
            ],
            note: `${check.name} on ${check.sha} not counted: ${counted.why}`,
            detail: { notCounted: counted.why, from },
          };
        }
        const named = counted.state === 'failure' && found ? found : undefined;
        return {
          events: [
            {
              type: 'checkReported',
              batchId: batch.id,
              candidateSha: check.sha,
              name: check.name,
              state: counted.state,
              ...(named?.failures && { failures: named.failures }),
              ...(named?.failuresTruncated && { failuresTruncated: true }),
              at: Date.now(),
            },
          ],
          note: `${check.name} ${counted.state} on ${check.sha}`,
          batchId: batch.id,
          detail: { from, ...named?.detail },
        };
      },
      { checksUrl: check.url, concerns: { candidateSha: check.sha }, unconcerned: `${check.sha} is no live candidate`, evidence },
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
      { baseRef: branch, concerns: { baseRef: branch } },
    );
  }

  private async each(
    { organizationId, integrationId, repositoryId, source }: ProviderEventTarget,
    numbers: readonly number[],
    decide: (
      state: MergeQueueState,
      facts: { policy: QueuePolicy; approval?: Approval; evidence?: FailuresRead },
    ) => { events: MergeQueueEvent[]; note: string; batchId?: string; entryId?: string; detail?: Record<string, unknown> },
    options: {
      checksUrl?: string;
      baseRef?: string;
      headSha?: string;
      number?: number;
      concerns: QueueConcern;
      unconcerned?: string;
      title?: string;
      /** Read from the provider for a queue the event concerns, before its lock (a failing check run's failing tests). */
      evidence?: (queueId: string) => Promise<FailuresRead>;
    },
  ): Promise<ProviderEventResult[]> {
    const { checksUrl, baseRef, headSha, number } = options;
    const results: ProviderEventResult[] = [];
    const queues = await this.repository.queuesOfRepository(organizationId, integrationId, repositoryId, options.concerns, MAX_QUEUES_PER_DELIVERY);
    for (const queue of queues) {
      if (!queue.concerned) {
        if (options.unconcerned !== undefined) results.push({ queueId: queue.id, applied: false, note: options.unconcerned });
        continue;
      }
      if (baseRef !== undefined && queue.baseRef !== baseRef) continue;
      const policy = policyOf(queue.policy);
      // Asked only for a PR the queue holds: a push to any other PR costs no provider call.
      const holds = headSha !== undefined && number !== undefined && (await this.repository.hasLiveEntry(organizationId, queue.id, number));
      const approval = holds && policy.onHeadPush === 'requeueIfApproved' ? await this.approvalOf(organizationId, queue.id, number, headSha) : undefined;
      const asks = holds && approval?.approved === true && pathGroupsOf(queue).length > 0;
      const paths = asks ? await this.pathsOf(organizationId, queue.id, headSha) : undefined;
      const evidence = options.evidence ? await options.evidence(queue.id) : undefined;
      let note = '';
      let batchId: string | undefined;
      let entryId: string | undefined;
      let askLater = false;
      const detail: Record<string, unknown> = { source: source.provider, deliveryId: source.deliveryId, providerEvent: source.event };
      const { outcome } = await this.writer.apply({
        organizationId,
        queueId: queue.id,
        // decide() finds the PR's live entry by number in the state (a window loads it), and the batches.
        numbers,
        build: ({ row, state }) => {
          const decided = decide(state, { policy, approval, evidence });
          note = decided.note;
          batchId = decided.batchId;
          entryId = decided.entryId;
          Object.assign(detail, decided.detail);
          // The pushed head's lanes, when its paths were asked and known, reach the planner with it.
          const lanes = entryId !== undefined && headSha !== undefined && paths !== 'failed' ? lanesEvents(row, entryId, headSha, paths) : [];
          return [...decided.events, ...lanes];
        },
        quietWhenUnchanged: true,
        detail,
        after: async (q, { row, state }, applied) => {
          if (checksUrl !== undefined && batchId !== undefined && applied.changed) await q.setChecksUrl(batchRowId(row.id, batchId), checksUrl);
          if (options.title !== undefined && entryId !== undefined) await markGitHubTitle(q, state, entryId, options.title);
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
   * A failing check run's failing tests: its annotations of level `failure` (at most
   * MAX_ANNOTATION_PAGES pages), each a failing test named by its title (else its message's first
   * line, else its path), its path as the file, kind `annotation`. Evidence, read best-effort: a
   * run without annotations names none (its output's title is noted), and a read that fails is
   * thrown when `retry` (the delivery's job is tried again) and otherwise noted, the result
   * counting without them.
   */
  private async checkRunFailures(
    organizationId: string,
    queueId: string,
    run: { id: number; annotations: number; title?: string },
    retry: boolean,
  ): Promise<FailuresRead> {
    const output = run.title !== undefined ? ` (its output: ${run.title})` : '';
    if (run.annotations === 0) return { detail: { failuresFrom: `none: the check run has no annotations${output}` } };
    try {
      const git = await this.gits.forSource((await this.repository.find(organizationId, queueId)).repository);
      if (!(git instanceof GitHubMergeQueueGit)) return { detail: { failuresFrom: 'none: the provider has no check run annotations' } };
      const read = await git.checkRunFailureAnnotations(run.id, MAX_ANNOTATION_PAGES);
      if (read === null) return { detail: { failuresFrom: `none: GitHub knows no check run ${run.id}` } };
      const failures = read.annotations.map((a) => ({
        test: (a.title?.trim() || a.message?.trim().split('\n', 1)[0].trim() || a.path).slice(0, MAX_FAILURE_TEST_LENGTH),
        ...(a.path && { file: a.path.slice(0, MAX_FAILURE_FILE_LENGTH) }),
        kind: 'annotation',
      }));
      if (failures.length === 0) return { detail: { failuresFrom: `none: the check run has no failure annotations${output}` } };
      return { failures, ...(read.more && { failuresTruncated: true }), detail: { failuresFrom: 'annotations', failures: failures.length } };
    } catch (error) {
      if (retry) throw error;
      this.logger.warn(
        `merge queue ${queueId}: the annotations of check run ${run.id} could not be read (${(error as Error).message}); the result counts without its failing tests`,
      );
      return { detail: { failuresUnread: `the check run's annotations could not be read: ${(error as Error).message}`.slice(0, 500) } };
    }
  }

  /**
   * Whether GitHub says PR `number`'s new head is approved under the repository's review rules:
   * `reviewDecision` APPROVED for `headSha` itself (`headRefOid`; a decision for an older or newer
   * head tells nothing about this one). Anything else, a failure to ask included, is no approval,
   * with why (the PR is then removed: a push never lands unreviewed).
   */
  private async approvalOf(organizationId: string, queueId: string, number: number, headSha: string): Promise<Approval> {
    try {
      const git = await this.gits.forSource((await this.repository.find(organizationId, queueId)).repository);
      if (!(git instanceof GitHubMergeQueueGit)) return { approved: false, why: 'the provider has no review decision' };
      const review = await git.reviewDecision(number);
      if (review === null) return { approved: false, why: `GitHub knows no pull request #${number}` };
      if (review.headSha !== headSha) return { approved: false, why: `GitHub's review decision is for ${review.headSha}, not the pushed ${headSha}` };
      if (review.decision !== 'APPROVED') return { approved: false, why: `the new head is not approved (review decision ${review.decision ?? 'none'})` };
      return { approved: true };
    } catch (error) {
      this.logger.warn(`merge queue ${queueId}: the review decision of #${number} could not be read (${(error as Error).message}); the PR is removed`);
      return { approved: false, why: `the review decision could not be read: ${(error as Error).message}` };
    }
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

/** Pages of a check run's annotations read at most (50 a page). */
export const MAX_ANNOTATION_PAGES = 4;

/** A failing check run's failing tests as read (none when `failures` is absent), and what the event trail says of them. */
interface FailuresRead {
  failures?: { test: string; file?: string; kind: string }[];
  failuresTruncated?: boolean;
  detail: Record<string, unknown>;
}

/** GitHub's word on a pushed head (requeueIfApproved). */
type Approval = { approved: true } | { approved: false; why: string };

/** Where a check result came from, for the event trail. */
function sourceDetail(source: ReportedCheckSource): Record<string, string> {
  if (source.kind === 'status') return { kind: 'status' };
  return { kind: source.kind, ...(source.appId !== undefined && { appId: source.appId }), ...(source.appSlug !== undefined && { appSlug: source.appSlug }) };
}

function liveEntry(state: MergeQueueState, number: number) {
  return state.entries.find((e) => e.number === number && !FINAL_ENTRY_STATUSES.includes(e.status));
}
