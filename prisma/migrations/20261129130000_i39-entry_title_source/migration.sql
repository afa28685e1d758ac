-- Issue 39: where an entry's title came from: 'request' (the API caller gave it) or 'github' (the
-- PR's title as GitHub has it, read by the worker and followed on `pull_request edited`). Null: no
-- title, or a title given before this column (the API's: shown as 'request').
ALTER TABLE "MergeQueueEntry" ADD COLUMN "titleSource" TEXT;
