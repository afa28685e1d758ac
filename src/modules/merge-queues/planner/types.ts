import type { PathGroup } from './lanes';

export const MERGE_QUEUE_STATUSES = ['idle', 'active', 'paused', 'migrating', 'disabled'] as const;
export type MergeQueueStatus = (typeof MERGE_QUEUE_STATUSES)[number];

export const MERGE_QUEUE_BATCH_STATUSES = ['preparing', 'testing', 'ready', 'merging', 'reconciling', 'landed', 'failed', 'withdrawn'] as const;
export type MergeQueueBatchStatus = (typeof MERGE_QUEUE_BATCH_STATUSES)[number];

export const MERGE_QUEUE_ENTRY_STATUSES = ['queued', 'testing', 'blocked', 'merging', 'merged', 'removed', 'failed'] as const;
export type MergeQueueEntryStatus = (typeof MERGE_QUEUE_ENTRY_STATUSES)[number];

export const MERGE_QUEUE_OPERATION_KINDS = ['prepare', 'publish', 'startCi', 'land', 'readBack', 'cleanup'] as const;
export type MergeQueueOperationKind = (typeof MERGE_QUEUE_OPERATION_KINDS)[number];

export const MERGE_QUEUE_OPERATION_OUTCOMES = ['pending', 'running', 'unknown'] as const;
export type MergeQueueOperationOutcome = (typeof MERGE_QUEUE_OPERATION_OUTCOMES)[number];

export const MERGE_QUEUE_CHECK_STATES = ['pending', 'success', 'failure'] as const;
export type MergeQueueCheckState = (typeof MERGE_QUEUE_CHECK_STATES)[number];

export const FINAL_BATCH_STATUSES: readonly MergeQueueBatchStatus[] = ['landed', 'failed', 'withdrawn'];
export const FINAL_ENTRY_STATUSES: readonly MergeQueueEntryStatus[] = ['merged', 'removed', 'failed'];

export interface PlannerConfig {
  /** Checks that must all report `success` on a candidate before it may land. */
  requiredChecks: string[];
  /** Batches holding (or about to hold) a CI runner at once. */
  maxParallel: number;
  minBatch: number;
  maxBatch: number;
  /**
   * The fixed flaky budget (the rule before issue 40): extra solo runs a PR gets after failing
   * alone before it is `failed`. Null (the default): the posterior rule of blame.ts decides
   * instead, from the flake history of the failing tests (at most two solo runs per head).
   */
  flakyRetries: number | null;
  /** A required check still pending this long after CI started counts as failed. */
  checkTimeoutMs: number;
  /** Entries with at least this priority trigger the urgent rule. */
  urgentPriority: number;
  /** Final entries and batches kept in state (oldest dropped first). */
  historyLimit: number;
  failureEwmaAlpha: number;
  initialFailureRate: number;
  /** batchDepth is the largest size whose estimated success probability stays at or above this. */
  targetBatchSuccess: number;
  /** Speculation stops extending the chain once the chain's estimated success drops below this. */
  minChainSuccess: number;
  initialCiDurationMs: number;
  /** Share of the free runners isolation probes may take while chain work is waiting. */
  probeShare: number;
  /** A run longer than this many times the light CI mean counts as heavy (see ci-weight.ts). */
  heavyCiFactor: number;
  /** A running candidate is restarted only when a fresh run is expected this many times sooner. */
  restartMargin: number;
  initialHeavyRate: number;
  /**
   * A batch is stacked on the chain unless waiting for the chain to land is expected to land it
   * sooner by more than this many light CI runs.
   */
  speculationTolerance: number;
  /**
   * Look-ahead screening (screening.ts): runners that neither the chain nor the probes can use run
   * base + a pool of waiting PRs, to find bad PRs before they reach the chain. Never lands.
   */
  screening: boolean;
  /** PRs per screening pool; 0 follows the batch depth. */
  screenPoolSize: number;
  /** Prior probability that a PR whose screen passed (or that a probe cleared) still fails a chain batch. */
  screenedFailureRate: number;
  /**
   * Path groups: one lane per group (lanes.ts). Absent or empty: the queue is one line. The
   * planner keeps them with the rest of the settings; entries' lanes are worked out from them.
   */
  pathGroups?: PathGroup[];
}

/** The tunables a queue's owner may change after creation (PATCH /merge-queues/{id}). */
export type QueueSettings = Partial<
  Pick<PlannerConfig, 'requiredChecks' | 'maxParallel' | 'minBatch' | 'maxBatch' | 'flakyRetries' | 'checkTimeoutMs' | 'screening' | 'pathGroups'>
>;

export interface MergeQueueCheck {
  name: string;
  state: MergeQueueCheckState;
}

/**
 * One failing test a CI result named (issue 40): the required check that ran it, the test's name
 * and, where CI says, its build target, its file and its kind (`failure`, `error`, `timeout`...).
 * Evidence only: the planner uses it as a prior and for fail-first hints, never to blame alone.
 */
export interface CheckFailure {
  check: string;
  test: string;
  target?: string;
  file?: string;
  kind?: string;
}

/** At most this many failing tests are kept per result; more are cut and flagged `failuresTruncated`. */
export const MAX_CHECK_FAILURES = 50;

/** What the planner has learnt of one test (or of one check that reports no tests): see fail-first.ts. */
export interface FlakeStat {
  /** Results in which it failed. */
  failed: number;
  /** Of those, the ones followed by a pass on the same commit: it flaked. */
  flaked: number;
  /** When it last failed (event time), to keep the most recent when the table is full. */
  at: number;
  /** Of `failed`, the ones whose commit CI tested again (its check reported again): `flaked` plus those that failed again. Absent: 0. */
  retested?: number;
}

/** A failed result kept until its commit is tested again (flake learning, blame.ts learnFlakes). */
export interface RecentFailure {
  sha: string;
  check: string;
  /** The failure keys (fail-first.ts failureKey) of the result. */
  keys: string[];
}

/** A result that did not count for a required check (see BatchState.notCounted). */
export interface NotCountedCheck {
  sha: string;
  name: string;
  why: string;
}

/** A CI result kept until its batch is testing the commit it names (see BatchState.earlyChecks). */
export interface EarlyCheck {
  sha: string;
  name: string;
  state: Exclude<MergeQueueCheckState, 'pending'>;
  /** The failing tests a failing result named (checks.ts keeps them on the batch when it counts). Absent: none. */
  failures?: Omit<CheckFailure, 'check'>[];
  failuresTruncated?: boolean;
}

export interface OperationRecord {
  id: string;
  kind: MergeQueueOperationKind;
  outcome: MergeQueueOperationOutcome;
}

export interface EntryState {
  id: string;
  number: number;
  headSha: string;
  url: string;
  title: string | null;
  status: MergeQueueEntryStatus;
  priority: number;
  setAside: boolean;
  /** Arrival order; ties in priority are planned by it. */
  position: number;
  batchId: string | null;
  block: string | null;
  enqueuedAt: number;
  /** Times this PR failed while tested alone on the then-current base. */
  failuresAlone: number;
  /** Set while the PR belongs to a failed batch whose culprit is not yet known. */
  suspectGroup: string | null;
  /** Passed in an isolation part whose result could not land; expected to pass again. */
  cleared: boolean;
  /** Head update or removal that arrived while a land was in flight; applied if it does not land. */
  pendingHeadSha: string | null;
  pendingRemoval: boolean;
  /**
   * Probability that CI is heavy (slow) whenever this PR is in the candidate, learned from run
   * durations (see ci-weight.ts); null until a run that held it has told something.
   */
  heavyProbability: number | null;
  /** A screen (screening.ts) passed on base + this PR's current head; absent: false. */
  screened?: boolean;
  /** A failed screen held this PR and its culprit is not yet known; absent: null. */
  screenGroup?: string | null;
  /** The live screen that holds this PR; absent: null. A screen never changes the entry's status. */
  screenId?: string | null;
  /** Building a screen with this head hit a merge conflict: no screen takes it again; absent: false. */
  screenBlocked?: boolean;
  /**
   * A removal with a reason deferred while a land was in flight: if it applies, the reason becomes
   * the entry's `block` and `headSha` (the pushed head, when given) its head. Absent: none.
   */
  removal?: { reason: string; headSha?: string };
  /**
   * The path groups (lanes) its current head's changed paths fall in, once known: the default
   * source of the targets a failing test names it by (fail-first.ts). Absent: not known.
   */
  lanes?: string[];
  /** The failing tests of the run that made this PR a suspect, until it is judged. Absent: none. */
  suspectedFor?: CheckFailure[];
  /** Failure keys (fail-first.ts failureKey) this head passed alone: not suspected again for them. Absent: none. */
  exonerations?: string[];
  /** Runs of this head alone (solo runs) so far; at most two per head. Absent: 0. */
  soloRuns?: number;
  /**
   * The probability that this head is bad, from the failing runs that held it since it became a
   * suspect (blame.ts, the posterior rule); absent: no such run, the queue's PR failure rate.
   */
  badProbability?: number;
  /** Failing runs (blamed candidates) that held this head; the livelock guard bounds it. Absent: 0. */
  failingRuns?: number;
}

export type BatchRole = 'chain' | 'part' | 'screen';

export interface BatchState {
  id: string;
  position: number;
  entryIds: string[];
  prNumbers: number[];
  status: MergeQueueBatchStatus;
  /**
   * `chain`: speculative candidate on the one ahead; `part`: isolation part on the base;
   * `screen`: a look-ahead screen on the base (screening.ts), which informs and never lands.
   */
  role: BatchRole;
  /** A chain batch formed only of screened (or cleared) PRs; absent: false. */
  screened?: boolean;
  /** Live batch whose candidate this one is built on; null once it is built on the base. */
  parentId: string | null;
  /** Commit the candidate is built on; null until known (the parent's candidate is not built yet). */
  baseSha: string | null;
  candidateSha: string | null;
  published: boolean;
  ciStartedAt: number | null;
  /**
   * Entries whose changes the candidate held that were not on the base when its CI started: its
   * own and those of the live batches it is built on. Their tests are what the run runs.
   */
  ciContentIds: string[];
  /** The running CI already went past the heavy threshold, and the entries learned it. */
  ciSeenHeavy: boolean;
  checks: MergeQueueCheck[];
  /**
   * Results CI reported before the batch was testing for their commit (the candidate was pushed
   * but its publish or startCi not yet recorded, or not yet known at all). Applied when the batch
   * starts testing that commit; results for another commit are dropped then. Absent: none.
   */
  earlyChecks?: EarlyCheck[];
  /**
   * Results for required checks that did not count (a provider event from a source the queue does
   * not take for that check, or `skipped`/`neutral` where that is no pass), with why: the check
   * stays pending, and its timeout names why (checks.ts onTick). Absent: none.
   */
  notCounted?: NotCountedCheck[];
  /** The failing tests CI named for the candidate (bounded by MAX_CHECK_FAILURES per result). Absent: none named. */
  failures?: CheckFailure[];
  /** CI named more failing tests than were kept. Absent: false. */
  failuresTruncated?: boolean;
  failureReason: string | null;
  operation: OperationRecord | null;
  /** Status to resume after a readBack, set when the batch enters `reconciling`. */
  interruptedKind: MergeQueueOperationKind | null;
  withdrawOnResolve: boolean;
}

export interface PendingCleanup {
  operationId: string;
  batchId: string;
  candidateSha: string | null;
}

export interface PlannerStats {
  /** EWMA of the probability that a PR is bad, from final entry outcomes. */
  failureRate: number;
  /** EWMA of the probability that a chain batch fails when its turn to land comes. */
  batchFailureRate: number;
  /** EWMA like batchFailureRate, of chain batches formed only of screened PRs; absent: not learned yet. */
  screenedBatchFailureRate?: number;
  /** EWMA of the time from CI start to all required checks passing. */
  ciDurationMs: number;
  /** EWMA of passing runs within the heavy threshold (see ci-weight.ts). */
  lightCiMs: number;
  /** EWMA of passing runs past the heavy threshold. */
  heavyCiMs: number;
  /** EWMA of the share of landed PRs known to be heavy. */
  heavyRate: number;
  /** Candidates withdrawn and rebuilt because their run still carried the tests of landed PRs. */
  restartedBatches: number;
  landedBatches: number;
  failedBatches: number;
  /** Flake history per failure key (fail-first.ts), bounded; absent: nothing learnt yet. */
  flakes?: Record<string, FlakeStat>;
  /** Finished CI results seen, the denominator of every flake rate; absent: 0. */
  resultsSeen?: number;
  /** Failed results whose commit may still be tested again (bounded, oldest dropped); absent: none. */
  recentFailures?: RecentFailure[];
}

/**
 * Why a queue stopped by itself (holds.ts): the provider refused a land for a reason that will not
 * go away (`landRefused`), or the queue failed too often in a row (`quarantined`). The queue is
 * `paused` while it holds; `resume` (or `enable`) clears it.
 */
export interface QueueHold {
  kind: 'landRefused' | 'quarantined';
  reason: string;
  /** When the hold was placed (the event's time). */
  since: number;
  /** Entries whose `block` carries the reason until the hold is cleared. */
  entryIds: string[];
}

export interface MergeQueueState {
  revision: number;
  status: MergeQueueStatus;
  baseSha: string;
  batchDepth: number;
  counters: { batch: number; operation: number; entry: number; group: number };
  entries: EntryState[];
  batches: BatchState[];
  cleanups: PendingCleanup[];
  stats: PlannerStats;
  config: PlannerConfig;
  /**
   * Set while `migrating` when the queue is to be `paused` once the move completes: it was paused
   * before the move, or a pause arrived during it (and no resume after that). The name is kept
   * for the queues' stored state.
   */
  pausedBeforeMigration?: boolean;
  /** Set while the queue is stopped by itself, with the reason (see QueueHold). Absent: none. */
  hold?: QueueHold;
}

export interface EnqueueInput {
  id: string;
  number: number;
  headSha: string;
  url: string;
  title?: string;
  priority?: number;
}

export interface ReadBackFacts {
  /** Current head of the base branch. */
  baseSha: string;
  /** Candidate commit of the batch if it exists. */
  candidateSha: string | null;
  /** The candidate is the base head or one of its ancestors: the land happened. */
  candidateLanded: boolean;
  published: boolean;
  ciStarted: boolean;
}

interface At {
  /** Time of the event in milliseconds; the planner's only notion of time. */
  at: number;
}

export type MergeQueueEvent =
  | (At & { type: 'enqueue'; entry: EnqueueInput })
  /**
   * `stopLand`: a push to the PR (a provider event): a land of its batch not yet started is
   * withdrawn instead of awaited, so the old head does not land (one already started cannot be
   * called back: the change waits for its outcome, as without the flag).
   */
  | (At & { type: 'headUpdated'; entryId: string; headSha: string; stopLand?: boolean })
  /**
   * `reason`: the entry's `block` once removed (e.g. "new commits were pushed"); `headSha`: the
   * PR's head it leaves with (the pushed one, so the PR shows why); `stopLand` as for headUpdated.
   */
  | (At & { type: 'remove'; entryId: string; reason?: string; headSha?: string; stopLand?: boolean })
  | (At & { type: 'setAside'; entryId: string; setAside: boolean })
  | (At & { type: 'setPriority'; entryId: string; priority: number })
  /** The PR's title changed (read from the provider, or the provider said it was edited). Changes nothing but the title. */
  | (At & { type: 'titleChanged'; entryId: string; title: string })
  | (At & { type: 'pause' })
  | (At & { type: 'resume' })
  | (At & { type: 'disable' })
  | (At & { type: 'enable' })
  | (At & { type: 'migrate' })
  | (At & { type: 'configure'; config: QueueSettings })
  | (At & { type: 'migrated'; baseSha: string })
  | (At & { type: 'baseMoved'; baseSha: string })
  | (At & { type: 'tick' })
  | (At & { type: 'operationStarted'; operationId: string })
  | (At & {
      type: 'operationSucceeded';
      operationId: string;
      candidateSha?: string;
      readBack?: ReadBackFacts;
    })
  | (At & {
      type: 'operationFailed';
      operationId: string;
      reason: string;
      conflictEntryId?: string;
      baseSha?: string;
    })
  | (At & { type: 'operationUnknown'; operationId: string })
  /** The provider refused a land for a reason that will not go away (a protected branch, a permission, a deleted ref). */
  | (At & { type: 'landRefused'; operationId: string; reason: string })
  /** The worker gave up on the queue after too many failures in a row; `operationId`: the operation that kept failing, if any. */
  | (At & { type: 'quarantined'; reason: string; operationId?: string })
  | (At & {
      type: 'checkReported';
      batchId: string;
      /** The commit CI tested, as the report names it (not necessarily the batch's candidate). */
      candidateSha: string;
      name: string;
      state: MergeQueueCheckState;
      /**
       * The result does not count, and why (its source is not the one the queue takes for the
       * check, or it was skipped where that is no pass): it is noted, `state` is `pending`.
       */
      notCounted?: string;
      /** The failing tests CI named with a failing result (without `check`: it is `name`), bounded. */
      failures?: Omit<CheckFailure, 'check'>[];
      /** CI named more failing tests than were sent. */
      failuresTruncated?: boolean;
    });

export type MergeQueueEventType = MergeQueueEvent['type'];

export interface HeadRef {
  entryId: string;
  number: number;
  headSha: string;
}

export type MergeQueueOperation =
  | { id: string; kind: 'prepare'; batchId: string; baseSha: string; heads: HeadRef[] }
  | { id: string; kind: 'publish'; batchId: string; candidateSha: string }
  | { id: string; kind: 'startCi'; batchId: string; candidateSha: string; requiredChecks: string[] }
  | {
      id: string;
      kind: 'land';
      batchId: string;
      candidateSha: string;
      expectedBaseSha: string;
      prNumbers: number[];
    }
  | {
      id: string;
      kind: 'readBack';
      batchId: string;
      candidateSha: string | null;
      interrupted: MergeQueueOperationKind;
    }
  | { id: string; kind: 'cleanup'; batchId: string; candidateSha: string | null };

/** One status step the reducer took, in order; every step was checked against its table. */
export interface StatusTransition {
  subject: 'queue' | 'batch' | 'entry';
  /** The batch or entry id, or 'queue'. */
  id: string;
  from: string;
  to: string;
}

export interface PlannerResult {
  state: MergeQueueState;
  operations: MergeQueueOperation[];
  /**
   * The status steps taken within this event, in order (one event may take several, e.g. a batch
   * testing -> ready -> merging). Empty when the state did not change.
   */
  transitions: StatusTransition[];
}
