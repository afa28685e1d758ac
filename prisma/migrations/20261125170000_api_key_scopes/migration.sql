-- API keys limited to some permissions (POST /api-keys `scopes`): a subset of the owner's
-- permissions. Empty: the key may do everything its owner may (every key created before).
ALTER TABLE "ApiKey" ADD COLUMN "scopes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
