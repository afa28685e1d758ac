-- Merge queue engine (issue 14): batch and operation rows keyed by the planner's ids, the
-- executor's order and completion, and the queue's event trail. The placeholder tables were never
-- written by any code, so the new NOT NULL columns need no backfill.

-- AlterTable
ALTER TABLE "MergeQueueBatch" ADD COLUMN "plannerKey" TEXT NOT NULL;

-- AlterTable
ALTER TABLE "MergeQueueOperation" ADD COLUMN "finishedAt" TIMESTAMP(3),
ADD COLUMN "ordinal" INTEGER NOT NULL,
ADD COLUMN "plannerKey" TEXT NOT NULL,
ADD COLUMN "revision" BIGINT NOT NULL;

-- CreateTable
CREATE TABLE "MergeQueueEvent" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "queueId" TEXT NOT NULL,
    "revision" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "detail" JSONB NOT NULL,
    "transitions" JSONB NOT NULL,
    "operations" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MergeQueueEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "MergeQueueBatch_queueId_plannerKey_key" ON "MergeQueueBatch"("queueId", "plannerKey");

-- CreateIndex
CREATE INDEX "MergeQueueOperation_queueId_finishedAt_revision_ordinal_idx" ON "MergeQueueOperation"("queueId", "finishedAt", "revision", "ordinal");

-- CreateIndex
CREATE INDEX "MergeQueueEvent_queueId_createdAt_id_idx" ON "MergeQueueEvent"("queueId", "createdAt", "id");

-- AddForeignKey
ALTER TABLE "MergeQueueEvent" ADD CONSTRAINT "MergeQueueEvent_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueEvent" ADD CONSTRAINT "MergeQueueEvent_queueId_fkey" FOREIGN KEY ("queueId") REFERENCES "MergeQueue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
