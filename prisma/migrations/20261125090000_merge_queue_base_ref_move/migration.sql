-- PATCH /merge-queues/{id} with a new baseRef: the queue is `migrating` until the worker has let
-- any land in flight finish on the old ref, then it moves to this one.
ALTER TABLE "MergeQueue" ADD COLUMN "pendingBaseRef" TEXT;

CREATE UNIQUE INDEX "MergeQueue_repositoryId_pendingBaseRef_key" ON "MergeQueue"("repositoryId", "pendingBaseRef");
