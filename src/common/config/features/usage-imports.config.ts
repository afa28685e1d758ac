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
  },
  (v) => ({
    usage: { cooldownSeconds: v.USAGE_IMPORT_COOLDOWN_SECONDS, freshnessMs: v.USAGE_IMPORT_FRESHNESS_MS, maxPages: v.USAGE_IMPORT_MAX_PAGES },
  }),
);
