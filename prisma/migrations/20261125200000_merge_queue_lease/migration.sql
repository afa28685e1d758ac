-- Fenced execution (issue 19, point 3): a per-queue lease for the executor, with an epoch (the
-- fencing token) that grows on every take; operations record the lease that claimed them.
ALTER TABLE "MergeQueue" ADD COLUMN "leaseHolder" TEXT;
ALTER TABLE "MergeQueue" ADD COLUMN "leaseEpoch" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "MergeQueue" ADD COLUMN "leaseExpiresAt" TIMESTAMP(3);

ALTER TABLE "MergeQueueOperation" ADD COLUMN "ownerHolder" TEXT;
ALTER TABLE "MergeQueueOperation" ADD COLUMN "ownerEpoch" BIGINT;
