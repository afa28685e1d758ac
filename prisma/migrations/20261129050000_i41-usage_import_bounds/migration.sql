-- Issue 41, bounded usage imports. An import streams each page of a run's jobs into the database as
-- it arrives (never a whole listing in memory), so its checkpoint is finer than a page of runs: each
-- run it is importing records which import is walking its jobs and the next page of them to fetch
-- (NULL once every page is written), committed with that page. The import keeps the time it has
-- spent in workers and the bytes it has read from the provider, summed over its attempts, against
-- USAGE_IMPORT_DEADLINE_MS and USAGE_IMPORT_MAX_BYTES.
ALTER TABLE "CiUsageRecord" ADD COLUMN "jobsImportId" TEXT, ADD COLUMN "jobsNextPage" INTEGER;

ALTER TABLE "UsageImport" ADD COLUMN "runningMs" BIGINT NOT NULL DEFAULT 0, ADD COLUMN "bytesRead" BIGINT NOT NULL DEFAULT 0;
