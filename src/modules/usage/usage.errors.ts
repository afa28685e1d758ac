import { defineErrors } from '@/common/errors/error-catalogue';

/** Failures an import records on its row (the worker's, not the API's: the import endpoint never waits for them). */
export const UsageErrors = defineErrors('Usage', {
  INVALID_DATE_RANGE: [400, 'The date range is invalid: `from` must not be after `to`.'],
  /** Recorded in an import's `lastError` (never an API answer): the provider listed more pages than USAGE_IMPORT_MAX_PAGES. */
  PAGE_LIMIT_REACHED: [502, 'The git provider listed more pages of workflow runs than USAGE_IMPORT_MAX_PAGES allows; the import stopped there.'],
  /** Recorded in an import's `lastError`: the import ran longer in workers than USAGE_IMPORT_DEADLINE_MS. */
  DEADLINE_EXCEEDED: [504, 'The import ran longer than USAGE_IMPORT_DEADLINE_MS allows; it stopped there.'],
  /** Recorded in an import's `lastError`: the provider sent more bytes than USAGE_IMPORT_MAX_BYTES. */
  BYTES_LIMIT_REACHED: [502, 'The git provider sent more bytes than USAGE_IMPORT_MAX_BYTES allows for one import; it stopped there.'],
  /** Recorded in an import's `lastError`: one page was larger than USAGE_IMPORT_MAX_PAGE_BYTES (or held too many JSON values). */
  PAGE_TOO_LARGE: [502, 'The git provider sent a page larger than a usage import accepts (USAGE_IMPORT_MAX_PAGE_BYTES); the import stopped there.'],
  /** Recorded in an import's `lastError`: its worker stopped (killed, out of memory, blocked) more often than usage imports are resumed. */
  STALLED: [500, 'The worker running the import stopped while running it more often than an import is resumed; it was failed rather than retried again.'],
});
