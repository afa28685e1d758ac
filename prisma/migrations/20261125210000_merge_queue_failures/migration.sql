-- The merge-queue executor's failures in a row, its backoff, and quarantine (issue 19, no silent loops).
ALTER TABLE "MergeQueue" ADD COLUMN "failureCount" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "MergeQueue" ADD COLUMN "retryAt" TIMESTAMP(3);
ALTER TABLE "MergeQueue" ADD COLUMN "quarantined" BOOLEAN NOT NULL DEFAULT false;
