import { feature, int } from '../variables';

/** CI usage imports (POST /scm/actions/usage/import and the worker). */
export const usageImportsConfig = feature(
  'CI usage imports',
  {
    USAGE_IMPORT_COOLDOWN_SECONDS: int({ min: 0, max: 86_400, default: 60, doc: 'the least `retryAfterSeconds` the usage import endpoint answers' }),
    USAGE_IMPORT_FRESHNESS_MS: int({
      min: 1_000,
      max: 365 * 86_400_000,
      default: 86_400_000,
      doc: 'a connected code source whose newest successful usage import finished longer ago than this makes `stale` true',
    }),
    USAGE_IMPORT_MAX_PAGES: int({
      min: 1,
      max: 1_000_000,
      default: 1_000,
      doc: 'the most pages of workflow runs (100 runs each) one usage import walks through; a provider that lists more fails the import with `dpa:Usage:PAGE_LIMIT_REACHED` in its `lastError` (the pages before the cap stay imported)',
    }),
    USAGE_IMPORT_DEADLINE_MS: int({
      min: 1_000,
      max: 7 * 86_400_000,
      default: 3_600_000,
      doc: 'the longest one usage import may run in workers, summed over its attempts (waiting for a rate limit or a retry does not count); at it the requests in flight are dropped and the import fails with `dpa:Usage:DEADLINE_EXCEEDED` in its `lastError` (what was committed before stays imported)',
    }),
    USAGE_IMPORT_MAX_BYTES: int({
      min: 1_024,
      max: 1_099_511_627_776,
      default: 2_147_483_648,
      doc: 'the most response bytes one usage import may read from the provider, summed over its attempts; past it the import fails with `dpa:Usage:BYTES_LIMIT_REACHED` in its `lastError` (what was committed before stays imported)',
    }),
    USAGE_IMPORT_MAX_PAGE_BYTES: int({
      min: 1_024,
      max: 67_108_864,
      default: 4_194_304,
      doc: "the largest page (response body) a usage import accepts from the provider, and at most 250,000 JSON values per page; the connection is dropped past it and the import fails with `dpa:Usage:PAGE_TOO_LARGE`. With `USAGE_IMPORT_PAGES_IN_FLIGHT` it bounds a worker's memory (docs/usage-imports.md)",
    }),
    USAGE_IMPORT_PAGES_IN_FLIGHT: int({
      min: 1,
      max: 256,
      default: 16,
      doc: 'provider pages one worker process downloads and holds at once for all of its usage imports together (one import also at most 16)',
    }),
  },
  (v) => ({
    usage: {
      cooldownSeconds: v.USAGE_IMPORT_COOLDOWN_SECONDS,
      freshnessMs: v.USAGE_IMPORT_FRESHNESS_MS,
      maxPages: v.USAGE_IMPORT_MAX_PAGES,
      /** Time in workers one import may take, summed over its attempts. */
      deadlineMs: v.USAGE_IMPORT_DEADLINE_MS,
      /** Provider response bytes one import may read, summed over its attempts. */
      maxBytes: v.USAGE_IMPORT_MAX_BYTES,
      /** The largest page (response body) an import accepts. */
      maxPageBytes: v.USAGE_IMPORT_MAX_PAGE_BYTES,
      /** Pages a worker process holds at once across its imports. */
      pagesInFlight: v.USAGE_IMPORT_PAGES_IN_FLIGHT,
    },
  }),
);
