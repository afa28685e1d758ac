-- Issue 38: a queue's own settings beyond the planner's tunables (GET/PATCH /merge-queues/{id}/settings):
-- what a push to a queued PR does (onHeadPush), whether skipped/neutral checks pass (skippedPasses),
-- and where each required check must come from (checkSources, by check name). '{}' is every default:
-- a push removes the PR, skipped is no pass, a required check counts check runs of any app.
ALTER TABLE "MergeQueue" ADD COLUMN "policy" JSONB NOT NULL DEFAULT '{}';
