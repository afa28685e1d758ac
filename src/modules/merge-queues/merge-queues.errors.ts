import { defineErrors } from '@/common/errors/error-catalogue';

export const MergeQueueErrors = defineErrors('MergeQueue', {
  NOT_FOUND: [404, 'The merge queue does not exist.'],
  ENTRY_NOT_FOUND: [404, 'The merge queue entry does not exist.'],
  BATCH_NOT_FOUND: [404, 'The merge queue batch does not exist.'],
  CANDIDATE_NOT_FOUND: [404, 'No batch of the merge queue has this candidate commit.'],
  VIEW_LINK_NOT_FOUND: [404, 'The merge queue view link does not exist.'],
  ALREADY_EXISTS: [409, 'The repository already has a merge queue for this base ref.'],
  ENTRY_EXISTS: [409, 'This pull request is already in the queue.'],
  REVISION_MISMATCH: [409, 'The merge queue has changed since the revision given in If-Match.'],
  CHECK_NOT_FOR_CANDIDATE: [
    409,
    "The check result names another commit than the batch's current candidate; it was recorded in the events and changed nothing.",
  ],
  CODE_SOURCE_NOT_FOUND: [422, 'The code source does not exist.'],
  PROVIDER_NOT_SUPPORTED: [422, 'Merge queues run on LOCAL_GIT, GITHUB and GITHUB_ENTERPRISE code sources; GITLAB is not supported yet.'],
  BASE_REF_NOT_FOUND: [422, 'The base ref does not exist in the repository.'],
  INVALID_SETTINGS: [422, 'The merge queue settings are not consistent.'],
  DISABLED: [422, 'The merge queue is disabled.'],
  ENTRY_FINAL: [422, 'The merge queue entry is merged, removed or failed.'],
  ENTRY_LIMIT_REACHED: [422, 'The merge queue holds as many live entries as this server allows (MERGE_QUEUE_MAX_LIVE_ENTRIES).'],
  QUEUE_LIMIT_REACHED: [422, 'The organization has as many merge queues as this server allows (MERGE_QUEUE_MAX_PER_ORGANIZATION).'],
  VIEW_LINK_TOO_LONG: [422, 'A view link may not work longer than this server allows (MERGE_QUEUE_VIEW_LINK_TTL_DAYS).'],
  VIEW_LINK_LIMIT_REACHED: [422, 'The merge queue has as many live view links as allowed (100); revoke some first.'],
  CHECK_NOT_REQUIRED: [422, "The check is not one of the queue's required checks."],
  JUNIT_NO_TESTS: [
    422,
    'The JUnit report holds no test case that ran (none, or every one skipped): it neither passes nor fails the check; it changed nothing.',
  ],
  CHECK_SOURCE_BOUND: [422, "The check is bound to a GitHub App in the queue's settings: only that app's check runs count for it."],
  NO_CHECKS_ON_GITHUB: [
    422,
    "GitHub requires no check on the queue's base branch (neither its protection rule nor a ruleset): require one on GitHub, or give requiredChecks with requiredChecksFrom: settings.",
  ],
  CHECKS_FROM_GITHUB: [
    422,
    "The queue's required checks come from GitHub (requiredChecksFrom: branchProtection); set requiredChecksFrom: settings to set them by hand.",
  ],
  CHECKS_NOT_FROM_GITHUB: [422, "The queue's required checks come from its settings, not from GitHub (requiredChecksFrom: settings)."],
});
