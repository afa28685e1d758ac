-- Issue 40: a live entry's lanes now reach the planner state (EntryState.lanes, the `entryLanes`
-- event) when they are matched. Entries matched before this have them on their row only: they are
-- put back to "not matched yet" (every lane, lanesHead cleared, as a change of path groups does),
-- so the paths sweep has the worker match them again from the paths their rows keep (asking the
-- provider only for entries that kept none), and the planner takes their lanes then.
UPDATE "MergeQueueEntry" e
   SET "lanes" = g."names", "lanesHead" = NULL, "lanesReason" = NULL
  FROM (
    SELECT q."id",
           (SELECT jsonb_agg(p.value -> 'name' ORDER BY p.ord)
              FROM jsonb_array_elements(q."settings" -> 'pathGroups') WITH ORDINALITY AS p(value, ord)) AS "names"
      FROM "MergeQueue" q
     WHERE jsonb_typeof(q."settings" -> 'pathGroups') = 'array' AND q."settings" -> 'pathGroups' <> '[]'::jsonb
  ) g
 WHERE e."queueId" = g."id"
   AND e."status" IN ('queued', 'testing', 'blocked', 'merging')
   AND e."lanesHead" IS NOT NULL
   AND e."planner" IS NOT NULL
   AND NOT (e."planner" ? 'lanes');
