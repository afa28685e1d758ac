-- Merge queues: an event loads a window of the planner state (issue 22, part 3; docs/merge-queue.md,
-- "What an event loads"). "plannerPlain" marks a plain waiting entry (planner/window.ts
-- isPlainWaiting: queued, in no batch, not blocked, no bisection facts, no deferred change); an
-- event loads every entry of the state that is not plain and the first plain ones in planning order.
ALTER TABLE "MergeQueueEntry" ADD COLUMN "plannerPlain" BOOLEAN NOT NULL DEFAULT false;

UPDATE "MergeQueueEntry" SET "plannerPlain" = true
WHERE "planner" IS NOT NULL
  AND "planner"->>'status' = 'queued'
  AND jsonb_typeof("planner"->'batchId') = 'null'
  AND jsonb_typeof("planner"->'block') = 'null'
  AND jsonb_typeof("planner"->'suspectGroup') = 'null'
  AND "planner"->'cleared' = 'false'::jsonb
  AND "planner"->'failuresAlone' = '0'::jsonb
  AND jsonb_typeof("planner"->'pendingHeadSha') = 'null'
  AND "planner"->'pendingRemoval' = 'false'::jsonb;

-- The head of the waiting line (planning order: priority descending, then arrival), and the rest of the state.
CREATE INDEX "MergeQueueEntry_line_idx" ON "MergeQueueEntry" ("queueId", "priority" DESC, "position") WHERE "planner" IS NOT NULL AND "plannerPlain" AND NOT "setAside";
CREATE INDEX "MergeQueueEntry_hot_idx" ON "MergeQueueEntry" ("queueId", "plannerSeq") WHERE "planner" IS NOT NULL AND NOT "plannerPlain";
