-- Merge queues on GitHub load a window of the planner state too (issue 22, part 3; docs/merge-queue.md,
-- "What an event loads"): besides the head of the waiting line, the front that commit statuses
-- number, where PRs set aside count. Set-aside waiting PRs are few; this index finds the first of them.
CREATE INDEX "MergeQueueEntry_aside_idx" ON "MergeQueueEntry" ("queueId", "priority" DESC, "position") WHERE "planner" IS NOT NULL AND "plannerPlain" AND "setAside";
