/*
 * The merge-queue planner's public surface: a pure reducer over plain-JSON state (see
 * docs/merge-queue.md for the rules and the map from each rule to the function that holds it).
 * Code outside planner/ imports from here only.
 */
export { type NewBatch, newBatchState } from './batch-state';
export { checkReportFit, MAX_EARLY_CHECKS } from './checks';
export { heavyThresholdMs } from './ci-weight';
export {
  type ChangedPaths,
  everyLane,
  keptPaths,
  KEPT_PATHS_LIMITS,
  MAX_GROUP_PATTERNS,
  MAX_PATH_GROUPS,
  MAX_PATTERN_LENGTH,
  PATH_GROUP_NAME,
  type PathGroup,
  pathGroupsOf,
} from './lanes';
export {
  compiledSizeOf,
  type CompiledPathGroups,
  compilePathGroups,
  lanesFor,
  type LanesReason,
  lanesReasonText,
  type LanesVerdict,
  matchWorkBound,
  PATH_MATCH_LIMITS,
  pathOverLimits,
} from './path-matcher';
export { checkedConfig, createMergeQueueState, DEFAULT_PLANNER_CONFIG } from './config';
export { knownLanes, lanesHeadOf } from './entry-lanes';
export { failFirstTests, failureKey, MAX_FAIL_FIRST_TESTS } from './fail-first';
export { batchHints, type BatchHints, failFirstText, type SuspectHint } from './fail-first-hints';
export { estimateMergeTimes, type EntryEstimate } from './eta';
export { checkStepInvariants, InvariantMonitor } from './invariants';
export { reduceAll, reduceMergeQueue } from './reducer';
export { batchOutcome, isFinalBatch } from './step';
export {
  assertBatchTransition,
  assertEntryTransition,
  assertQueueTransition,
  BATCH_TRANSITIONS,
  ENTRY_TRANSITIONS,
  IllegalTransitionError,
  isAllowedTransition,
  isReachable,
  QUEUE_TRANSITIONS,
} from './transitions';
export * from './types';
export { frontHolds, isPlainWaiting, liveLine, namedBy, WHOLE_STATE_EVENTS, type WindowEdge, windowHolds, windowOf, windowSize } from './window';
