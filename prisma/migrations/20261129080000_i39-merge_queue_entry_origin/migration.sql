-- Issue 39: how an entry came into the queue and who asked: {"via": "api" | "label" | "comment",
-- "actor": "<principal id or GitHub login>", "actorKind": "principal" | "github"}. Null for entries
-- enqueued before this column (they came through the API). Shown in the entry's details, never on
-- the spec's closed MergeQueueEntry.
ALTER TABLE "MergeQueueEntry" ADD COLUMN "origin" JSONB;
