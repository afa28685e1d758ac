-- Lanes (issue 22, part 4; docs/merge-queue.md, "Lanes"): a queue's path groups are in its settings; each
-- entry keeps the paths its PR changes, as the provider listed them (null: not known), the head commit
-- they were asked for (null: never asked; they hold for the entry only while that is the head it is to
-- be tested with), and the lanes those paths touch (null: the queue has no path groups).
ALTER TABLE "MergeQueueEntry" ADD COLUMN "changedPaths" JSONB;
ALTER TABLE "MergeQueueEntry" ADD COLUMN "pathsHead" TEXT;
ALTER TABLE "MergeQueueEntry" ADD COLUMN "lanes" JSONB;
