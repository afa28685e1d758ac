import { defineErrors } from '@/common/errors/error-catalogue';

/** Failures an import records on its row (the worker's, not the API's: the import endpoint never waits for them). */
export const UsageErrors = defineErrors('Usage', {
  INVALID_DATE_RANGE: [400, 'The date range is invalid: `from` must not be after `to`.'],
  /** Recorded in an import's `lastError` (never an API answer): the provider listed more pages than USAGE_IMPORT_MAX_PAGES. */
  PAGE_LIMIT_REACHED: [502, 'The git provider listed more pages of workflow runs than USAGE_IMPORT_MAX_PAGES allows; the import stopped there.'],
});
