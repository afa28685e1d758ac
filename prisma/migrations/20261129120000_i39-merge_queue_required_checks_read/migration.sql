-- Issue 39: what a queue with `requiredChecksFrom: branchProtection` last read of GitHub's required
-- checks: {"readAt": "<ISO 8601>", "checks": [{"name", "app"?, "from": [{"kind": "branchProtection"}
-- | {"kind": "ruleset", "rulesetId", "rulesetSource"?}]}], "failed"?: {"at", "reason"}}. Null for a
-- queue that never read them. Shown on GET /merge-queues/{id}/settings, never on the spec's MergeQueue.
ALTER TABLE "MergeQueue" ADD COLUMN "requiredChecksRead" JSONB;
