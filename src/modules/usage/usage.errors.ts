import { defineErrors } from '@/common/errors/error-catalogue';

/** Failures an import records on its row (the worker's, not the API's: the import endpoint never waits for them). */
export const UsageErrors = defineErrors('Usage', {
  INVALID_DATE_RANGE: [400, 'The date range is invalid: `from` must not be after `to`.'],
});
