-- Issue 38 (point 5, 6) and 41 (point 4): webhook deliveries routed by GitHub's repository id, their
-- payload dropped once applied, and each organization's deliveries not yet applied counted.

-- A delivery's payload is kept only until the worker applies it; the row (its id) stays for the ledger.
ALTER TABLE "WebhookDelivery" ALTER COLUMN "payload" DROP NOT NULL;

-- Payloads of deliveries already applied are no longer needed.
UPDATE "WebhookDelivery" SET "payload" = NULL WHERE "processedAt" IS NOT NULL;

CREATE INDEX "WebhookDelivery_organizationId_processedAt_idx" ON "WebhookDelivery"("organizationId", "processedAt");

-- Code sources by the provider's repository id (GitHub's numeric id, kept through renames and transfers).
CREATE INDEX "CodeSource_foreignId_idx" ON "CodeSource"("foreignId");
