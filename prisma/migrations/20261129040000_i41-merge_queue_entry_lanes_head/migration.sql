-- Issue 41: path matching out of the queue's transaction, and bounded stored paths.
--   "lanesHead": the head the entry's "lanes" were matched for under the queue's current path
--     groups (null: not matched yet; a change of path groups clears it and the worker matches again
--     outside the queue's lock). Before, "pathsHead" said both.
--   "pathsCount": how many paths the provider listed for "pathsHead" (null: not known), so the
--     paths themselves need not be kept, nor read, to tell a listed PR from an unlisted one.
--   "lanesReason": why the entry is in every lane when it is for want of knowing better (a path in
--     no group, over the path limits, matching past its deadline, the provider's list cut short).
-- "changedPaths" keeps at most 1,000 paths of 100,000 characters in all (KEPT_PATHS_LIMITS);
-- longer lists kept before are dropped here (their lanes stay).
ALTER TABLE "MergeQueueEntry" ADD COLUMN "lanesHead" TEXT, ADD COLUMN "pathsCount" INTEGER, ADD COLUMN "lanesReason" TEXT;

UPDATE "MergeQueueEntry"
SET "lanesHead" = CASE WHEN "lanes" IS NOT NULL THEN "pathsHead" END,
    "pathsCount" = CASE WHEN jsonb_typeof("changedPaths") = 'array' THEN jsonb_array_length("changedPaths") END
WHERE "pathsHead" IS NOT NULL OR "changedPaths" IS NOT NULL;

UPDATE "MergeQueueEntry"
SET "changedPaths" = NULL
WHERE jsonb_typeof("changedPaths") = 'array'
  AND (jsonb_array_length("changedPaths") > 1000 OR length("changedPaths"::text) > 100000 + 4 * jsonb_array_length("changedPaths"));
