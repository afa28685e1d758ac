-- GitHub webhooks: each integration gets a webhook secret (encrypted like its credentials), and
-- every verified delivery is stored once per (integration, X-GitHub-Delivery) before the worker
-- applies it.
ALTER TABLE "Integration" ADD COLUMN "encryptedWebhookSecret" BYTEA;

CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "integrationId" TEXT NOT NULL,
    "deliveryId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "action" TEXT,
    "payload" JSONB NOT NULL,
    "outcome" TEXT,
    "processedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "WebhookDelivery_integrationId_deliveryId_key" ON "WebhookDelivery"("integrationId", "deliveryId");
CREATE INDEX "WebhookDelivery_organizationId_createdAt_idx" ON "WebhookDelivery"("organizationId", "createdAt");
CREATE INDEX "WebhookDelivery_createdAt_idx" ON "WebhookDelivery"("createdAt");

ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_integrationId_fkey" FOREIGN KEY ("integrationId") REFERENCES "Integration"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Deliveries are found by the repository they name: code sources by owner/name.
CREATE INDEX "CodeSource_nameWithOwner_idx" ON "CodeSource"("nameWithOwner");
CREATE INDEX "Integration_installationId_idx" ON "Integration"("installationId");
