-- Merge queues persisted incrementally (issue 22, part 3): the planner's entries and batches move
-- out of the queue's "plannerState" document into their rows ("planner": the planner's whole
-- EntryState / BatchState, "plannerSeq": its place in the state's list), written only when they
-- change; the document keeps counters, stats, config, cleanups and the hold.
ALTER TABLE "MergeQueueEntry" ADD COLUMN "planner" JSONB;
ALTER TABLE "MergeQueueEntry" ADD COLUMN "plannerSeq" BIGINT;
ALTER TABLE "MergeQueueBatch" ADD COLUMN "planner" JSONB;
ALTER TABLE "MergeQueueBatch" ADD COLUMN "plannerSeq" BIGINT;
ALTER TABLE "MergeQueue" ADD COLUMN "nextWakeAt" TIMESTAMP(3);

-- Existing documents: each entry and batch the state holds goes to its row, in the list's order.
UPDATE "MergeQueueEntry" AS e SET "planner" = x.elem, "plannerSeq" = x.ord - 1
FROM "MergeQueue" AS q, jsonb_array_elements(COALESCE(q."plannerState"->'entries', '[]'::jsonb)) WITH ORDINALITY AS x(elem, ord)
WHERE e."queueId" = q."id" AND e."id" = x.elem->>'id';

UPDATE "MergeQueueBatch" AS b SET "planner" = x.elem, "plannerSeq" = x.ord - 1
FROM "MergeQueue" AS q, jsonb_array_elements(COALESCE(q."plannerState"->'batches', '[]'::jsonb)) WITH ORDINALITY AS x(elem, ord)
WHERE b."queueId" = q."id" AND b."plannerKey" = x.elem->>'id';

UPDATE "MergeQueue" SET "plannerState" = "plannerState" - 'entries' - 'batches' WHERE "plannerState" IS NOT NULL;

-- Queues with CI running are due at once: their first tick computes when they are due next.
UPDATE "MergeQueue" AS q SET "nextWakeAt" = (now() AT TIME ZONE 'UTC')
WHERE EXISTS (SELECT 1 FROM "MergeQueueBatch" b WHERE b."queueId" = q."id" AND b."status" IN ('testing', 'reconciling'));

-- The rows an event loads (the ones the planner state holds), in order.
CREATE INDEX "MergeQueueEntry_planner_idx" ON "MergeQueueEntry" ("queueId", "plannerSeq") WHERE "planner" IS NOT NULL;
CREATE INDEX "MergeQueueBatch_planner_idx" ON "MergeQueueBatch" ("queueId", "plannerSeq") WHERE "planner" IS NOT NULL;
-- The sweep: queues with something due, and queues with unfinished operations; neither grows with idle queues.
CREATE INDEX "MergeQueue_nextWakeAt_idx" ON "MergeQueue" ("nextWakeAt") WHERE "nextWakeAt" IS NOT NULL;
CREATE INDEX "MergeQueueOperation_unfinished_idx" ON "MergeQueueOperation" ("queueId") WHERE "finishedAt" IS NULL;
